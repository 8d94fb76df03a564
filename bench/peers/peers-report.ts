/**
 * The peers bench's figures from its rounds: per system the median of each figure over the rounds it
 * ran (calls made again after their answer: the sum), and agentq ÷ peer ratios taken round by round
 * (the same machine load on both sides of a ratio), then their median.
 */
import { percentile } from '../lib/stats.js';
import type { SystemName } from './systems.js';
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

export function peersFigures(rounds: Partial<Record<SystemName, RoundFigures[]>>): Record<string, number> {
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
  const ours = rounds.agentq ?? [];
  for (const [peer, list] of Object.entries(rounds)) {
    if (peer === 'agentq' || !list) continue;
    for (const name of RATIOS) {
      const ratios = list.flatMap((round, index) => {
        const mine = ours[index]?.[name];
        const theirs = round[name];
        return mine !== undefined && theirs !== undefined && theirs > 0 ? [mine / theirs] : [];
      });
      if (ratios.length > 0) figures[`agentq_vs_${peer}_${name}`] = median(ratios);
    }
  }
  return figures;
}

const cell = (value: number | undefined, digits = 0) =>
  value === undefined || !Number.isFinite(value)
    ? '—'
    : value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The per-system table and the ratio table, as Markdown. */
export function peersTables(figures: Record<string, number>, systems: readonly string[]): string {
  const of = (system: string, name: string) => figures[`${system}_${name}`];
  const rows: [string, (system: string) => string][] = [];
  for (const workload of WORKLOAD_NAMES) {
    const label = WORKLOAD_LABELS[workload];
    rows.push(
      [
        `${label}: r1 step p50 / p95, ms`,
        (s) => `${cell(of(s, `${workload}_step_p50_ms_r1`), 2)} / ${cell(of(s, `${workload}_step_p95_ms_r1`), 2)}`,
      ],
      [`${label}: r100 steps/s`, (s) => cell(of(s, `${workload}_steps_per_s_r100`))],
      [`${label}: r100 CPU per step, µs`, (s) => cell(of(s, `${workload}_cpu_us_per_step_r100`))],
    );
  }
  rows.push(
    ['kill -9: calls made again after their answer (sum)', (s) => cell(of(s, 'crash_again_after_answer'))],
    ['… after an answer sent ≥ 1 s before the kill (sum)', (s) => cell(of(s, 'crash_again_after_answer_1s'))],
    ['kill -9: kill to all done, s', (s) => cell(of(s, 'crash_kill_to_done_s'), 2)],
    ['kill -9: new worker start → first step taken, s', (s) => cell(of(s, 'crash_worker_ready_s'), 2)],
    ['kill -9: new worker start → ready (its own signal), s', (s) => cell(of(s, 'crash_worker_up_s'), 2)],
    ['rounds', (s) => cell(of(s, 'rounds'))],
  );
  const table = (header: string[], body: string[][]) =>
    [
      `| ${header.join(' | ')} |`,
      `|${header.map(() => '---').join('|')}|`,
      ...body.map((row) => `| ${row.join(' | ')} |`),
    ].join('\n');
  const perSystem = table(
    ['', ...systems],
    rows.map(([label, value]) => [label, ...systems.map(value)]),
  );
  const peers = systems.filter((system) => system !== 'agentq');
  const ratioRows = RATIOS.map((name) => [name, ...peers.map((peer) => cell(figures[`agentq_vs_${peer}_${name}`], 2))]);
  const ratios = table(['agentq ÷ peer, same rounds', ...peers], ratioRows);
  return `${perSystem}\n\n${ratios}\n`;
}
