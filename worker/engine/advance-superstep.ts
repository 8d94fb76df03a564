import { toAgentqError } from '../../shared/contracts/errors.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { stateFrom } from '../../shared/graph/channels.js';
import type { Graph } from '../../shared/graph/graph.js';
import type { StepMeta } from '../../shared/store/redis-run-store.js';
import { failPastDeadline } from './fail-past-deadline.js';
import { failRun } from './step-failure.js';
import {
  superstepOutcome,
  superstepTransition,
  type SuperstepTransition,
  type TaskWrite,
} from './superstep-transition.js';
import type { StepProcessorOptions } from './step-processor-options.js';

/** The last task of a parallel superstep merges all writes (in task order) and advances; its script adds the next jobs. */
export async function advanceSuperstep(
  options: StepProcessorOptions,
  meta: StepMeta,
  graph: Graph,
  graphId: string,
): Promise<void> {
  const { store, transitions, stateCache } = options;
  const tasks = meta.tasks ?? [];
  const writes = await store.commits.writes(meta.id);
  if (writes.size < tasks.length) return;
  stateCache.delete(meta.id);
  const stored = await store.reads.state(meta.id);
  const state = stateFrom(graph.channels, stored);
  const ordered = [...writes.entries()].sort(([a], [b]) => a - b).map(([, write]) => write);
  let transition: SuperstepTransition;
  try {
    transition = await superstepTransition(graph, state, ordered as TaskWrite[]);
  } catch (error) {
    await failRun(
      options.store,
      meta,
      meta.superstep,
      toAgentqError(error),
      ordered.map((write) => write.node).join(','),
      1,
    ).catch(() => undefined);
    return;
  }
  const { applied, next } = transition;
  const messages: Message[] = ordered.flatMap((write) => write.messages);
  const outcome = superstepOutcome(graph, transition);
  const merged = await transitions.commit(
    {
      runId: meta.id,
      superstep: meta.superstep,
      task: -1,
      mode: 'advance',
      totalTasks: tasks.length,
      outcome,
      state: pick(applied.state, applied.changed),
      messages,
    },
    outcome.kind === 'next' ? next : [],
    graphId,
    undefined,
    meta,
  );
  if (merged.commit.kind === 'deadline') await failPastDeadline(options.store, meta, meta.superstep, 'advance', 1);
}

/** The named keys of a state, as a fresh object (what a commit writes). */
export function pick(state: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((key) => [key, state[key]]));
}
