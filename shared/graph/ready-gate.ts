import { AgentqError } from '../contracts/errors.js';
import { mergeNextTasks } from './define-graph.js';
import { WAITING_KEY, type Graph, type Task } from './graph.js';

/** A state after a superstep's writes, and the keys they changed (what a commit writes). */
export interface AppliedState<S> {
  state: S;
  changed: string[];
}

/**
 * Splits the tasks a superstep routed to, with those still waiting from before, into the tasks that run
 * next and those whose node's `ready(state)` is false; the waiting ones are kept in the state under
 * WAITING_KEY (a changed key when they change), so they are asked again after the next commit.
 * Pure and synchronous: the same state and routes give the same split on replay and time travel.
 * Throws NODE_NOT_READY when nothing would run but some tasks still wait: nothing else can change the
 * state, so the run fails rather than completing or hanging.
 */
export function settleReady<S extends object>(
  graph: Graph,
  applied: AppliedState<S>,
  routed: Task[],
): { applied: AppliedState<S>; next: Task[] } {
  if (!(WAITING_KEY in graph.channels)) return { applied, next: routed };
  const state = applied.state as Record<string, unknown>;
  const before = (state[WAITING_KEY] as Task[] | undefined) ?? [];
  const next: Task[] = [];
  const waiting: Task[] = [];
  // Tasks that waited come first: they were routed to before the ones routed just now (joins run once).
  for (const task of mergeNextTasks([before, routed])) {
    const ready = graph.nodes.get(task.node)?.ready;
    (!ready || ready(applied.state) ? next : waiting).push(task);
  }
  if (next.length === 0 && waiting.length > 0) throw notReady(graph, waiting);
  if (JSON.stringify(before) === JSON.stringify(waiting)) return { applied, next };
  const changed = applied.changed.includes(WAITING_KEY) ? applied.changed : [...applied.changed, WAITING_KEY];
  return { applied: { state: { ...applied.state, [WAITING_KEY]: waiting }, changed }, next };
}

/** A run's first tasks, from START, with those of nodes not ready on the initial state kept waiting. */
export async function enterGraph<S extends object>(graph: Graph, state: S): Promise<{ state: S; tasks: Task[] }> {
  const routed = await graph.entry(state as never);
  const { applied, next } = settleReady(graph, { state, changed: [] }, routed);
  return { state: applied.state, tasks: next };
}

function notReady(graph: Graph, waiting: Task[]): AgentqError {
  const nodes = [...new Set(waiting.map((task) => task.node))];
  return new AgentqError(
    'NODE_NOT_READY',
    `graph ${graph.id}: no other task is left to run and ${nodes.map((node) => `'${node}'`).join(', ')} ${nodes.length === 1 ? 'is' : 'are'} still not ready (ready(state) is false); nothing can change the state now`,
    { details: { nodes } },
  );
}
