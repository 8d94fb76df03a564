/**
 * The peers bench's figures from its rounds: per system the median of each figure over the rounds it
 * ran (calls made again after their answer: the sum), and agentq ÷ peer ratios taken round by round
 * (the same machine load on both sides of a ratio), then their median. Other builds of agentq
 * (`--agentq-root`, named `agentq@<commit>`) are systems too: beside them, this checkout's agentq ÷ that
 * build for every figure (after ÷ before), and that build ÷ each peer, all of the same rounds.
 */
import { percentile } from '../lib/stats.js';
import type { RoundFigures, WorkloadName } from './workloads.js';

const median = (values: readonly number[]) => percentile(values, 50);

const WORKLOAD_LABELS: Record<WorkloadName, string> = {
  noop: '10 no-op steps',
  model0: '10 model steps, 0 ms model',
  model200: '10 model steps, 200 ms model',
};
const WORKLOAD_NAMES = Object.keys(WORKLOAD_LABELS) as WorkloadName[];

/** Ratios agentq ÷ peer: above 1 means agentq has more of it (good for steps/s, bad for CPU and times). */
const RATIOS = [
  ...WORKLOAD_NAMES.flatMap((workload) => [
    `${workload}_steps_per_s_r100`,
    `${workload}_cpu_us_per_step_r100`,
    `${workload}_step_p50_ms_r1`,
  ]),
  'crash_kill_to_done_s',
  'crash_worker_ready_s',
  'crash_worker_up_s',
];

/** A build of agentq from another checkout (`agentq@<commit>`), as opposed to this one (`agentq`) and the peers. */
export const isOtherAgentq = (system: string) => system.startsWith('agentq@');
const isPeer = (system: string) => system !== 'agentq' && !isOtherAgentq(system);

/** The median over rounds of `mine ÷ theirs` for figure `name`, rounds paired by their index. */
function roundRatio(mine: RoundFigures[], theirs: RoundFigures[], name: string): number | undefined {
  const ratios = theirs.flatMap((round, index) => {
    const a = mine[index]?.[name];
    const b = round[name];
    return a !== undefined && b !== undefined && Number.isFinite(a) && b > 0 ? [a / b] : [];
  });
  return ratios.length > 0 ? median(ratios) : undefined;
}

export function peersFigures(rounds: Record<string, RoundFigures[] | undefined>): Record<string, number> {
  const figures: Record<string, number> = {};
  for (const [system, list] of Object.entries(rounds)) {
    if (!list || list.length === 0) continue;
    for (const name of Object.keys(list[0]!)) {
      const values = list.map((round) => round[name]!).filter((value) => Number.isFinite(value));
      figures[`${system}_${name}`] = name.startsWith('crash_again_after_answer')
        ? values.reduce((sum, value) => sum + value, 0)
        : median(values);
    }
    figures[`${system}_rounds`] = list.length;
  }
  const set = (key: string, value: number | undefined) => {
    if (value !== undefined) figures[key] = value;
  };
  const ours = rounds.agentq ?? [];
  for (const [system, list] of Object.entries(rounds)) {
    if (!list || system === 'agentq') continue;
    if (isOtherAgentq(system)) {
      for (const name of Object.keys(list[0] ?? {})) set(`agentq_vs_${system}_${name}`, roundRatio(ours, list, name));
      continue;
    }
    for (const name of RATIOS) {
      set(`agentq_vs_${system}_${name}`, roundRatio(ours, list, name));
      for (const [other, theirs] of Object.entries(rounds))
        if (isOtherAgentq(other) && theirs) set(`${other}_vs_${system}_${name}`, roundRatio(theirs, list, name));
    }
  }
  return figures;
}

const cell = (value: number | undefined, digits = 0) =>
  value === undefined || !Number.isFinite(value)
    ? '—'
    : value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface Row {
  label: string;
  /** Decimals of the system's figures (ratios always get 2). */
  digits: number;
  /** The cell, given where to read a figure by name and the decimals to show. */
  render(of: (name: string) => number | undefined, digits: number): string;
}

const figureRow = (label: string, name: string, digits: number): Row => ({
  label,
  digits,
  render: (of, decimals) => cell(of(name), decimals),
});

const ROWS: Row[] = [
  ...WORKLOAD_NAMES.flatMap((workload) => {
    const label = WORKLOAD_LABELS[workload];
    return [
      {
        label: `${label}: r1 step p50 / p95, ms`,
        digits: 2,
        render: (of, digits) =>
          `${cell(of(`${workload}_step_p50_ms_r1`), digits)} / ${cell(of(`${workload}_step_p95_ms_r1`), digits)}`,
      } satisfies Row,
      figureRow(`${label}: r100 steps/s`, `${workload}_steps_per_s_r100`, 0),
      figureRow(`${label}: r100 CPU per step, µs`, `${workload}_cpu_us_per_step_r100`, 0),
    ];
  }),
  figureRow('kill -9: calls made again after their answer (sum)', 'crash_again_after_answer', 0),
  figureRow('… after an answer sent ≥ 1 s before the kill (sum)', 'crash_again_after_answer_1s', 0),
  figureRow('kill -9: kill to all done, s', 'crash_kill_to_done_s', 2),
  figureRow('kill -9: new worker start → first step taken, s', 'crash_worker_ready_s', 2),
  figureRow('kill -9: new worker start → ready (its own signal), s', 'crash_worker_up_s', 2),
];

/** A row with nothing measured in any cell (a workload left out with `--workloads`) is left out. */
const measured = (row: string[]) => row.slice(1).some((value) => /\d/.test(value));

const table = (header: string[], body: string[][]) =>
  [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...body.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');

/**
 * The per-system table (after each other build of agentq, a column of this agentq ÷ that build, every
 * cell), the ratio table agentq ÷ peer and, per other build, that build ÷ peer, as Markdown.
 */
export function peersTables(figures: Record<string, number>, systems: readonly string[]): string {
  const columns = systems.flatMap((system) =>
    isOtherAgentq(system) && systems.includes('agentq') ? [system, `agentq ÷ ${system}`] : [system],
  );
  const value = (column: string, row: Row) => {
    const before = /^agentq ÷ (.+)$/.exec(column)?.[1];
    return before === undefined
      ? row.render((name) => figures[`${column}_${name}`], row.digits)
      : row.render((name) => figures[`agentq_vs_${before}_${name}`], 2);
  };
  const perSystem = table(
    ['', ...columns],
    [
      ...ROWS.map((row) => [row.label, ...columns.map((column) => value(column, row))]).filter(measured),
      ['rounds', ...columns.map((column) => (column.includes(' ÷ ') ? '' : cell(figures[`${column}_rounds`])))],
    ],
  );
  const peers = systems.filter(isPeer);
  const ratioTable = (ours: string) =>
    table(
      [`${ours} ÷ peer, same rounds`, ...peers],
      RATIOS.map((name) => [name, ...peers.map((peer) => cell(figures[`${ours}_vs_${peer}_${name}`], 2))]).filter(
        measured,
      ),
    );
  const ours = systems.filter((system) => !isPeer(system));
  return `${[perSystem, ...(peers.length > 0 ? ours.map(ratioTable) : [])].join('\n\n')}\n`;
}
