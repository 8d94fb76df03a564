import { applyUpdates, type StateOf } from '../../shared/graph/channels.js';
import { mergeNextTasks } from '../../shared/graph/define-graph.js';
import type { Graph, Task } from '../../shared/graph/graph.js';
import { settleReady } from '../../shared/graph/ready-gate.js';

/** A finished task's write: its node and the state update it returned (messages apart). */
export interface TaskWrite {
  node: string;
  update: Record<string, unknown>;
}

/** Where a superstep leads: the state its writes make, the keys they changed, and the next tasks ([]: the end). */
export interface SuperstepTransition {
  applied: { state: StateOf<Graph['channels']>; changed: string[] };
  next: Task[];
}

export type SuperstepOutcome = { kind: 'next'; tasks: Task[] } | { kind: 'completed'; output: unknown };

/**
 * Applies a superstep's writes in task order through the channels' reducers, then asks each written
 * node's router where to go (joins run once); tasks of nodes not ready on the new state wait in it
 * (settleReady). Pure: the step engine commits what it returns, the in-process runner keeps it in
 * memory. Throws what a reducer or router throws, or NODE_NOT_READY (the run fails).
 */
export function superstepTransition(
  graph: Graph,
  state: StateOf<Graph['channels']>,
  writes: readonly TaskWrite[],
): SuperstepTransition | Promise<SuperstepTransition> {
  const applied = applyUpdates(
    graph.channels,
    state,
    writes.map((write) => write.update as never),
  );
  const settle = (next: Task[]): SuperstepTransition => settleReady(graph, applied, next);
  if (writes.length === 1) {
    const routed = graph.next(writes[0]!.node, applied.state);
    // A promise only when the router is async: a sync graph's hot path awaits nothing.
    return Array.isArray(routed) ? settle(routed) : (routed as Promise<Task[]>).then(settle);
  }
  return Promise.all(writes.map((write) => graph.next(write.node, applied.state))).then((lists) =>
    settle(mergeNextTasks(lists)),
  );
}

/** What a transition commits: the next tasks, or (at the end) the graph's output of the state. */
export function superstepOutcome(graph: Graph, { applied, next }: SuperstepTransition): SuperstepOutcome {
  return next.length > 0 ? { kind: 'next', tasks: next } : { kind: 'completed', output: graph.output(applied.state) };
}
