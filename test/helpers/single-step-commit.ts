import type { Message, StepUsage, Usage } from '../../shared/contracts/run-record.js';
import type { CommitRequest } from '../../shared/store/run-store-types.js';

export interface SingleStepCommitOptions {
  runId: string;
  /** @default 0 */
  superstep?: number;
  /** The node the step ran. @default 'step' */
  node?: string;
  /** @default the next superstep runs `node` again */
  outcome?: CommitRequest['outcome'];
  /** The state keys the step changed. @default {} */
  state?: Record<string, unknown>;
  /** @default [] */
  messages?: Message[];
  /** The step's model usage, added to the run's. @default none */
  usage?: Usage;
  /** The step record's times (ms since the epoch). @default '' both: the store keeps them as given */
  startedAt?: number;
  /** @default startedAt */
  endedAt?: number;
  /** The step record's usage (which model answered). @default none */
  stepUsage?: StepUsage;
  /** CommitRequest's `memos`. @default not sent */
  memos?: boolean;
}

/**
 * What a worker commits for the only task of a superstep (mode 'single', task 0, first attempt): the
 * argument of `store.commits.commit` and of StepTransitions' commit, for the tests that drive the store
 * without a worker.
 */
export function singleStepCommit(options: SingleStepCommitOptions): CommitRequest {
  const { runId, superstep = 0, node = 'step', startedAt, endedAt = startedAt, stepUsage, usage, memos } = options;
  const iso = (at: number | undefined) => (at === undefined ? '' : new Date(at).toISOString());
  return {
    runId,
    superstep,
    task: 0,
    mode: 'single',
    step: {
      superstep,
      task: 0,
      node,
      attempts: 1,
      startedAt: iso(startedAt),
      endedAt: iso(endedAt),
      ...(stepUsage ? { usage: stepUsage } : {}),
    },
    totalTasks: 1,
    outcome: options.outcome ?? { kind: 'next', tasks: [{ node }] },
    state: options.state ?? {},
    messages: options.messages ?? [],
    ...(usage ? { usage } : {}),
    ...(memos === undefined ? {} : { memos }),
  };
}
