/** Writes a load run's three reports into a directory. */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { chartSvg } from './chartSvg.js';
import type { LoadResult } from './loadResult.js';
import { summaryMarkdown } from './summaryMarkdown.js';

/** Where {@link writeReport} put each file. */
export interface ReportFiles {
  readonly json: string;
  readonly markdown: string;
  readonly svg: string;
}

/** `dir/result.json`, `dir/summary.md` and `dir/chart.svg` for `result` (the directory is created). */
export async function writeReport(dir: string, result: LoadResult): Promise<ReportFiles> {
  await mkdir(dir, { recursive: true });
  const files: ReportFiles = {
    json: join(dir, 'result.json'),
    markdown: join(dir, 'summary.md'),
    svg: join(dir, 'chart.svg'),
  };
  await Promise.all([
    writeFile(files.json, `${JSON.stringify(result, null, 2)}\n`),
    writeFile(files.markdown, summaryMarkdown(result)),
    writeFile(files.svg, chartSvg(result.series)),
  ]);
  return files;
}
