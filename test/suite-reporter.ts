import { readFileSync } from 'node:fs';
import type { Reporter, SerializedError, TestModule } from 'vitest/node';
import type { Figure } from './helpers/suite-figures.js';

/** Where the global setup (test/global-setup.ts) names the run's figures file, in the main process. */
export const FIGURES_FILE_VARIABLE = 'AGENTQ_TEST_FIGURES_FILE';

/**
 * Registered after vitest's 'default' reporter: at the end of a run it prints the fault and abuse
 * suites' figures, then, last of all, what failed (or "no failures"), so a CI log cut to its tail still
 * says which tests to look at.
 */
export class SuiteReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): void {
    const file = process.env[FIGURES_FILE_VARIABLE];
    const figures = file ? readFigures(file) : [];
    if (figures.length > 0) console.log(figuresTable(figures));
    console.log(failureList(testModules, unhandledErrors));
  }
}

function readFigures(file: string): Figure[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // No test recorded a figure: the file was never written.
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Figure);
}

/** One table, grouped by scenario in the order recorded. */
function figuresTable(figures: Figure[]): string {
  const rows = figures.map((f) => [f.scenario, f.name, String(f.value), f.goal ?? '']);
  const header = ['scenario', 'figure', 'value', 'goal'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  const ordered = [...rows].sort((a, b) => rows.findIndex((r) => r[0] === a[0]) - rows.findIndex((r) => r[0] === b[0]));
  return [
    '',
    'figures',
    line(header),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...ordered.map(line),
  ].join('\n');
}

/** `file > title: first line of the error`, one line per failed test, failed file or unhandled error. */
function failureList(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>): string {
  const lines: string[] = [];
  for (const testModule of testModules) {
    const file = testModule.relativeModuleId;
    // A file that failed outside any test: it did not load, or a beforeAll/afterAll hook threw.
    for (const error of testModule.errors()) lines.push(`${file}: ${firstLine(error)}`);
    for (const suite of testModule.children.allSuites()) {
      for (const error of suite.errors()) lines.push(`${file} > ${suite.fullName}: ${firstLine(error)}`);
    }
    for (const testCase of testModule.children.allTests('failed')) {
      lines.push(`${file} > ${testCase.fullName}: ${firstLine(testCase.result().errors?.[0])}`);
    }
  }
  for (const error of unhandledErrors) lines.push(`unhandled error: ${firstLine(error)}`);
  if (lines.length === 0) return '\nno failures';
  return ['', `failed (${lines.length}):`, ...lines.map((line) => `  ${line}`)].join('\n');
}

function firstLine(error: SerializedError | undefined): string {
  const message = error?.message ?? error?.name ?? 'unknown error';
  return message.split('\n').find((line) => line.trim() !== '') ?? message;
}
