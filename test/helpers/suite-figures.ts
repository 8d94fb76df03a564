import { appendFileSync } from 'node:fs';
import { inject } from 'vitest';

export interface Figure {
  /** The scenario, e.g. "workers killed". */
  scenario: string;
  /** e.g. "runs_completed". */
  name: string;
  value: number | string;
  /** What the issue asks for, e.g. "= 200" or "p95 ≤ 10 s"; shown beside the value. */
  goal?: string;
}

/**
 * Records one figure of the fault or abuse suite. Test files run in worker processes, so figures go
 * to a JSON-lines file that the suite reporter (test/suite-reporter.ts) prints as one table at the end
 * of the run.
 */
export function recordFigure(figure: Figure): void {
  appendFileSync(inject('figuresFile'), `${JSON.stringify(figure)}\n`);
}
