import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import { singleStepCommit } from './single-step-commit.js';

export interface LongRunOptions {
  runId: string;
  tenant: string;
  /** Committed steps (one superstep each). */
  steps: number;
  /** A graph name for the run (no worker needs to serve it: nothing is enqueued). @default 'chain' */
  graph?: string;
  /** Each step adds one assistant message of this text to the history. @default none */
  message?: string;
  /** false: the last step leaves the run running, its next task never taken. @default true */
  complete?: boolean;
}

/**
 * A completed run of `steps` one-task supersteps, committed straight through the run store's BEGIN and
 * COMMIT scripts (what a worker does per step, without jobs, model calls or a worker): a 20,000-step
 * run in seconds, for the tests and benchmarks of pages and reads that must stay bounded on long runs.
 * The commands go out in order on the store's one connection, so they are sent without waiting for
 * each answer; each commit is still fenced by the cursor the previous one moved.
 */
export async function commitLongRun(store: RedisRunStore, options: LongRunOptions): Promise<void> {
  const { runId, tenant, steps, graph = 'chain' } = options;
  // A producer's connection has no offline queue: on a loaded machine it may still be connecting here.
  if (store.redis.status !== 'ready') await new Promise((resolve) => store.redis.once('ready', resolve));
  const start = Date.now();
  await store.creation.create({ id: runId, tenant, graph, input: { steps }, maxSteps: steps + 10, now: start });
  await store.creation.admit(runId, '1', { count: 0 }, [{ node: 'step' }], start);
  await commitChainSteps(store, options, 0, steps);
}

/**
 * Commits supersteps `from` to `to` (excluded) of a run `commitLongRun` began; the run completes at
 * step `options.steps` unless `complete` is false.
 */
export async function commitChainSteps(
  store: RedisRunStore,
  options: LongRunOptions,
  from: number,
  to: number,
): Promise<void> {
  const { runId, steps, message, complete = true } = options;
  const start = Date.now();
  const pending: Promise<unknown>[] = [];
  for (let superstep = from; superstep < to; superstep += 1) {
    const now = start + superstep - from;
    const last = complete && superstep === steps - 1;
    const node = superstep % 2 === 0 ? 'step' : 'check';
    pending.push(
      store.commits.begin(runId, superstep, 0, { node, superstep, task: 0, attempt: 1 }, now),
      store.commits.commit(
        singleStepCommit({
          runId,
          superstep,
          node,
          startedAt: now,
          endedAt: now + 1,
          stepUsage: { inputTokens: 12, outputTokens: 3, costUsd: 0.00001, model: 'scripted' },
          outcome: last
            ? { kind: 'completed', output: { count: steps } }
            : { kind: 'next', tasks: [{ node: superstep % 2 === 0 ? 'check' : 'step' }] },
          state: { count: superstep + 1 },
          messages: message === undefined ? [] : [{ role: 'assistant', content: `${message} ${superstep}` }],
          usage: { inputTokens: 12, outputTokens: 3, costUsd: 0.00001 },
        }),
        now + 1,
      ),
    );
    // Answers are collected in slices so a huge run does not hold every promise at once.
    if (pending.length >= 2000) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
}
