import type { AgentClient } from '../../producer/client/agent-client.js';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';

export interface RunAudit {
  runId: string;
  /** Everything wrong with the run, each naming it; empty when the run is whole. */
  problems: string[];
  /** Steps (`s<superstep>.t<task>`) with more than one step record or `step-end` event. */
  committedTwice: string[];
  /** Problems of the history: a tool call not answered exactly once (validateHistory). */
  historyProblems: string[];
  /** Redis time (ms, from the stream id) of every `step-start` of each step, in order. */
  starts: Map<string, number[]>;
  /** Redis time (ms) of each step's commit: its `step-end` event. */
  commits: Map<string, number>;
  messages: Message[];
}

/** The id the audit gives a step: `s<superstep>.t<task>`, as in its job id and memo keys. */
export function stepKey(superstep: number, task = 0): string {
  return `s${superstep}.t${task}`;
}

/**
 * Audits a finished run against the invariants the fault suites prove (labelled I1-I3 in the problems it
 * reports):
 * - nothing lost (I2): it completed;
 * - each step committed exactly once: supersteps 0..`supersteps`-1 contiguous in the step log, no step
 *   with two step records or two `step-end` events;
 * - a committed step never runs again (I1): no `step-start` of a step after its `step-end`;
 * - the history stays valid (I3): every tool call answered exactly once, right after its assistant message.
 */
export async function auditRun(
  client: AgentClient,
  runId: string,
  { supersteps }: { supersteps: number },
): Promise<RunAudit> {
  const problems: string[] = [];
  const record = await client.get(runId);
  if (record?.status !== 'completed')
    problems.push(`${runId}: ${record?.status ?? 'missing'} ${JSON.stringify(record?.error ?? null)}`);

  const committedTwice = new Set<string>();
  const records = await client.store.reads.steps(runId);
  const recorded = new Set<string>();
  for (const step of records) {
    const key = stepKey(step.superstep, step.task);
    if (recorded.has(key)) committedTwice.add(key);
    recorded.add(key);
  }
  const seenSupersteps = [...new Set(records.map((step) => step.superstep))];
  const expected = [...Array(supersteps).keys()];
  if (JSON.stringify(seenSupersteps) !== JSON.stringify(expected))
    problems.push(
      `${runId}: committed supersteps ${JSON.stringify(seenSupersteps)}, expected ${JSON.stringify(expected)}`,
    );

  const starts = new Map<string, number[]>();
  const commits = new Map<string, number>();
  for (const event of await client.store.eventLog.events(runId, { count: 100_000 })) {
    if (event.data.superstep === undefined) continue;
    const key = stepKey(Number(event.data.superstep), Number(event.data.task ?? 0));
    const at = Number(event.id.split('-')[0]);
    if (event.type === 'step-end') {
      if (commits.has(key)) committedTwice.add(key);
      commits.set(key, at);
    }
    if (event.type === 'step-start') {
      if (commits.has(key)) problems.push(`${runId}: ${key} started again after its commit (I1)`);
      starts.set(key, [...(starts.get(key) ?? []), at]);
    }
  }
  for (const key of committedTwice) problems.push(`${runId}: ${key} committed twice`);

  const messages = await client.store.reads.messages(runId);
  const historyProblems = validateHistory(messages);
  for (const problem of historyProblems) problems.push(`${runId}: history (I3): ${problem}`);
  return { runId, problems, committedTwice: [...committedTwice], historyProblems, starts, commits, messages };
}
