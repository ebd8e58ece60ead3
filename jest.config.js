/**
 * One Jest for the whole monorepo, in ESM mode (`@noble/*` v2 is ESM-only).
 * TypeScript is transpiled by swc; type-checking is `tsc -b` (part of `npm run build`).
 * Workspace imports resolve to sources, so tests never run against a stale `dist/`.
 * `test/perf` is kept out of the default run.
 */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'es6' },
        sourceMaps: 'inline',
      },
    ],
  },
  moduleNameMapper: {
    '^@monsoon/keccak$': '<rootDir>/native/keccak/src/index.ts',
    '^@monsoon/evm$': '<rootDir>/native/evm/src/index.ts',
    '^@monsoon/rdma$': '<rootDir>/native/rdma/src/index.ts',
    '^@monsoon/(.*)$': '<rootDir>/packages/$1/src/index.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testMatch: ['<rootDir>/{packages,native}/*/test/{unit,e2e}/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  reporters: ['default', '<rootDir>/scripts/jestSummaryReporter.cjs'],
  testTimeout: 120000,
};
