/**
 * Prints the plain closing line CI reads ("tests: N passed, N failed, N skipped"),
 * since Jest's own summary is not one of the formats it recognises.
 */
class JestSummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(
      `\ntests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`,
    );
  }
}
module.exports = JestSummaryReporter;
