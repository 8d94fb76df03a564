import type { AgentClient } from '../../producer/client/agent-client.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { auditRun } from '../helpers/run-audit.js';

export interface ChainRunsAudit {
  /** Everything wrong with any of the runs; empty when all are whole. */
  problems: string[];
  /** When each step was committed: the Redis time (ms) of its `step-end` event, sorted. */
  commitTimes: number[];
  /** When each step job was taken from the queue and begun: the Redis time (ms) of its `step-start` events, sorted. */
  startTimes: number[];
}

/**
 * Audits finished `chain` runs of `steps` steps: the invariants of `auditRun` (completed, each step
 * committed exactly once and contiguous, nothing started again after its commit) plus the chain's own
 * output, `visited` exactly [0..steps-1].
 */
export async function auditChainRuns(
  client: AgentClient,
  records: RunRecord[],
  steps: number,
): Promise<ChainRunsAudit> {
  const all: ChainRunsAudit = { problems: [], commitTimes: [], startTimes: [] };
  const expected = JSON.stringify([...Array(steps).keys()]);
  for (const record of records) {
    const audit = await auditRun(client, record.id, { supersteps: steps });
    all.problems.push(...audit.problems);
    const visited = (record.output as { visited?: number[] } | null)?.visited;
    if (JSON.stringify(visited) !== expected) all.problems.push(`${record.id}: visited ${JSON.stringify(visited)}`);
    all.commitTimes.push(...audit.commits.values());
    all.startTimes.push(...[...audit.starts.values()].flat());
  }
  all.commitTimes.sort((a, b) => a - b);
  all.startTimes.sort((a, b) => a - b);
  return all;
}

/**
 * How long after Redis answered again (`answeredAt`) the first of `times` (sorted) came, for an outage
 * during which Redis was gone or stopped from `downAt`: nothing is written meanwhile, so the first time
 * after `downAt` is the first after the outage. It can precede `answeredAt` by the test's own PING poll
 * (≤ 50 ms), which counts as 0. NaN when nothing came at all.
 */
export function firstAfterOutage(times: number[], downAt: number, answeredAt: number): number {
  return Math.max(0, (times.find((time) => time >= downAt) ?? Number.NaN) - answeredAt);
}
