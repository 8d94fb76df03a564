import { goalText, GOALS, meetsGoal } from './bench-goals.js';

export interface BenchRow {
  section: string;
  figure: string;
  value: number;
}

/** The rows as a Markdown table (section, figure, value, goal, met), columns padded so it also reads as plain text. */
export function formatBenchTable(rows: readonly BenchRow[]): string {
  const cells = [
    ['section', 'figure', 'value', 'goal', 'met'],
    ...rows.map(({ section, figure, value }) => {
      const met = meetsGoal(value, GOALS[figure]);
      return [section, figure, String(value), goalText(GOALS[figure]), met === undefined ? '' : met ? 'yes' : 'NO'];
    }),
  ];
  const widths = cells[0]!.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [
    line(cells[0]!),
    `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
    ...cells.slice(1).map(line),
  ].join('\n');
}
