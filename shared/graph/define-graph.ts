import { z } from 'zod';
import { AgentqError } from '../contracts/errors.js';
import type { OnBusy } from '../contracts/job-schema.js';
import { channel, type Channels, type StateOf, type UpdateOf } from './channels.js';
import {
  END,
  START,
  Send,
  WAITING_KEY,
  type CompiledNode,
  type Graph,
  type GraphConcurrency,
  type NodeFunction,
  type NodeOptions,
  type RouteResult,
  type RouteTarget,
  type Router,
  type Task,
} from './graph.js';
import { resolveRetryPolicy } from './retry-policy.js';

export interface GraphDefinition<C extends Channels, Input> {
  name: string;
  /** @default '1' */
  version?: string;
  /** Validates a run's input (zod). @default any JSON value */
  input?: z.ZodType<Input>;
  /** State keys and their reducers. `messages` is reserved for the run's history. */
  state: C;
  /** The state a run starts from, given its (validated) input. @default every key's initial value */
  initialState?: (input: Input) => UpdateOf<C>;
  /** The run's output, from its final state. @default the whole state */
  output?: (state: StateOf<C>) => unknown;
  /**
   * What a conversation's new turn does while the conversation's previous turn is unfinished, unless the
   * run's own `onBusy` says: wait behind it, cancel it, or fail with CONVERSATION_BUSY. @default 'queue'
   */
  onBusy?: OnBusy;
  /**
   * A concurrency key derived from each run's input (the user id, say) and its limit: at most `limit`
   * runs with the same key are taken in at once, the others wait in order. A run's own `concurrency` wins;
   * a `key` that returns nothing leaves the run without one.
   */
  concurrency?: GraphConcurrency<Input>;
}

type NodeEntry<C extends Channels> =
  | { kind: 'function'; run: NodeFunction<C>; options: NodeOptions<StateOf<C>> }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a subgraph's input type is irrelevant here
  | { kind: 'subgraph'; graph: Graph<any, any> };

interface RouteEntry<C extends Channels> {
  router: Router<StateOf<C>>;
  targets: readonly string[];
}

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

function invalid(message: string): AgentqError {
  return new AgentqError('INVALID_GRAPH', message);
}

/**
 * Builds a graph: nodes, static edges (`edge`), dynamic edges (`route`, with the targets it may
 * return declared so the graph can be checked), subgraphs (a built graph passed as a node).
 *
 * ```ts
 * const graph = defineGraph({ name: 'hello', state: { text: channel.replace('') } })
 *   .node('greet', () => ({ text: 'hi' }))
 *   .edge(START, 'greet')
 *   .edge('greet', END)
 *   .build();
 * ```
 */
export function defineGraph<C extends Channels, Input = unknown>(
  definition: GraphDefinition<C, Input>,
): GraphBuilder<C, Input> {
  return new GraphBuilder(definition);
}

export class GraphBuilder<C extends Channels, Input> {
  private readonly nodes = new Map<string, NodeEntry<C>>();
  private readonly edges = new Map<string, string[]>();
  private readonly routes = new Map<string, RouteEntry<C>>();

  constructor(private readonly definition: GraphDefinition<C, Input>) {}

  /** Adds a node: a function of (state, context), or a built graph used as a subgraph. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any subgraph whose keys the parent has
  node(name: string, run: NodeFunction<C> | Graph<any, any>, options: NodeOptions<StateOf<C>> = {}): this {
    if (!NAME_PATTERN.test(name)) {
      throw invalid(`node name '${name}' must be 1-64 characters of letters, digits, '_' or '-'`);
    }
    if (this.nodes.has(name)) throw invalid(`node '${name}' is defined twice`);
    this.nodes.set(
      name,
      typeof run === 'function' ? { kind: 'function', run, options } : { kind: 'subgraph', graph: run },
    );
    return this;
  }

  /** A static edge. Several edges from one node run their targets in parallel (one superstep). */
  edge(from: string, to: string): this {
    if (from === END) throw invalid(`an edge cannot start at END (edge to '${to}')`);
    if (to === START) throw invalid(`an edge cannot lead to START (edge from '${from}')`);
    const list = this.edges.get(from) ?? [];
    list.push(to);
    this.edges.set(from, list);
    return this;
  }

  /**
   * A dynamic edge: after `from`, `router(state)` picks a node, several nodes (run in parallel), `Send`s,
   * or END. `targets` lists every node it may pick (and END if it may end), so the graph can be checked.
   */
  route(from: string, router: Router<StateOf<C>>, targets: readonly string[]): this {
    if (this.routes.has(from)) throw invalid(`node '${from}' has two routers; combine them into one`);
    this.routes.set(from, { router, targets });
    return this;
  }

  build(): Graph<C, Input> {
    const { name, version = '1' } = this.definition;
    if (!NAME_PATTERN.test(name))
      throw invalid(`graph name '${name}' must be 1-64 characters of letters, digits, '_' or '-'`);
    if ('messages' in this.definition.state) {
      throw invalid(
        `graph '${name}': state key 'messages' is reserved for the run's history (return { messages } to append)`,
      );
    }
    if (WAITING_KEY in this.definition.state) {
      throw invalid(
        `graph '${name}': state key '${WAITING_KEY}' is reserved for the tasks of nodes that are not ready`,
      );
    }
    this.check(name);
    return this.compile(name, version);
  }

  /** Edge targets exist, every node is reachable from START, and END is reachable from every node. */
  private check(graphName: string): void {
    const known = (node: string) => this.nodes.has(node);
    const successors = new Map<string, string[]>();
    for (const from of [START, ...this.nodes.keys()]) {
      const targets = [...(this.edges.get(from) ?? []), ...(this.routes.get(from)?.targets ?? [])];
      successors.set(from, targets);
    }
    for (const from of [...this.edges.keys(), ...this.routes.keys()]) {
      if (from !== START && !known(from)) throw invalid(`graph '${graphName}': edge from unknown node '${from}'`);
    }
    for (const [from, targets] of successors) {
      for (const to of targets) {
        if (to !== END && !known(to))
          throw invalid(`graph '${graphName}': edge from '${from}' to unknown node '${to}'`);
      }
    }
    if ((successors.get(START) ?? []).length === 0) {
      throw invalid(`graph '${graphName}' has no entry: add .edge(START, '<first node>')`);
    }
    for (const [subgraphNode, entry] of this.nodes) {
      if (entry.kind !== 'subgraph') continue;
      for (const key of Object.keys(entry.graph.channels)) {
        if (key !== WAITING_KEY && !(key in this.definition.state)) {
          throw invalid(
            `graph '${graphName}': subgraph node '${subgraphNode}' uses state key '${key}', which this graph lacks`,
          );
        }
      }
    }
    const reachable = new Set<string>();
    const stack = [START];
    while (stack.length > 0) {
      const node = stack.pop()!;
      for (const to of successors.get(node) ?? []) {
        if (to !== END && !reachable.has(to)) {
          reachable.add(to);
          stack.push(to);
        }
      }
    }
    for (const node of this.nodes.keys()) {
      if (!reachable.has(node)) throw invalid(`graph '${graphName}': node '${node}' is unreachable from START`);
      if ((successors.get(node) ?? []).length === 0) {
        throw invalid(
          `graph '${graphName}': node '${node}' has no outgoing edge (add .edge('${node}', END) if it ends the run)`,
        );
      }
    }
    // END reachable from every node: walk the reversed graph from END.
    const reachesEnd = new Set<string>();
    let grew = true;
    while (grew) {
      grew = false;
      for (const [node, targets] of successors) {
        if (node === START || reachesEnd.has(node)) continue;
        if (targets.some((to) => to === END || reachesEnd.has(to))) {
          reachesEnd.add(node);
          grew = true;
        }
      }
    }
    for (const node of this.nodes.keys()) {
      if (!reachesEnd.has(node)) throw invalid(`graph '${graphName}': node '${node}' has no path to END`);
    }
  }

  private compile(name: string, version: string): Graph<C, Input> {
    const { state: declared, input, initialState, output, onBusy, concurrency } = this.definition;
    const inputSchema = (input ?? z.unknown()) as z.ZodType<Input>;
    if (concurrency && !(Number.isInteger(concurrency.limit) && concurrency.limit >= 1 && concurrency.limit <= 10_000))
      throw invalid(`graph '${name}': concurrency.limit must be a whole number from 1 to 10000`);
    const compiled = new Map<string, CompiledNode<C>>();
    // How to enter a top-level node: a subgraph is entered through its own entry tasks.
    const subgraphs = new Map<string, Graph>();
    for (const [nodeName, entry] of this.nodes) {
      if (entry.kind === 'function') {
        compiled.set(nodeName, {
          name: nodeName,
          run: entry.run,
          retry: resolveRetryPolicy(entry.options.retry),
          ...(entry.options.timeoutMs === undefined ? {} : { timeoutMs: entry.options.timeoutMs }),
          ...(entry.options.inline ? { inline: true } : {}),
          ...(entry.options.ready ? { ready: entry.options.ready } : {}),
        });
      } else {
        subgraphs.set(nodeName, entry.graph as Graph);
        for (const [innerName, inner] of entry.graph.nodes) {
          compiled.set(`${nodeName}/${innerName}`, {
            ...(inner as unknown as CompiledNode<C>),
            name: `${nodeName}/${innerName}`,
          });
        }
      }
    }
    // Waiting tasks live in the state (graph.ts, WAITING_KEY), so only a graph with a ready node has the key.
    const waits = [...compiled.values()].some((node) => node.ready);
    const channels = (waits ? { ...declared, [WAITING_KEY]: channel.replace<Task[]>([]) } : declared) as C;

    const toTasks = (from: string, result: RouteResult, targets: readonly string[]): Task[] => {
      const list = (Array.isArray(result) ? result : [result]) as (RouteTarget | typeof END)[];
      const tasks: Task[] = [];
      for (const target of list) {
        if (target === END) continue;
        const task: Task = target instanceof Send ? { node: target.node, arg: target.arg } : { node: target };
        if (!targets.includes(task.node)) {
          throw new AgentqError(
            'INTERNAL',
            `graph '${name}': the router after '${from}' returned '${task.node}', which is not among its declared targets [${targets.join(', ')}]`,
          );
        }
        tasks.push(task);
      }
      return tasks;
    };

    // Expands tasks that name a subgraph node into that subgraph's entry tasks (prefixed).
    const expand = (tasks: Task[], state: StateOf<C>): Task[] | Promise<Task[]> => {
      const lists = tasks.map((task) => {
        const subgraph = subgraphs.get(task.node);
        if (!subgraph) return [task];
        return then(subgraph.entry(state), (inner) =>
          inner.map((entry) => ({ ...entry, node: `${task.node}/${entry.node}` })),
        );
      });
      // Synchronous unless a subgraph's entry router is async: a sync graph's hot path awaits nothing.
      return lists.some(isPromise) ? Promise.all(lists).then((all) => all.flat()) : (lists as Task[][]).flat();
    };

    const outgoing = (from: string, state: StateOf<C>): Task[] | Promise<Task[]> => {
      const tasks: Task[] = (this.edges.get(from) ?? []).filter((to) => to !== END).map((to) => ({ node: to }));
      const route = this.routes.get(from);
      if (!route) return expand(dedupe(tasks), state);
      return then(route.router(state), (result) =>
        expand(dedupe([...tasks, ...toTasks(from, result, route.targets)]), state),
      );
    };

    const graph: Graph<C, Input> = {
      name,
      version,
      id: `${name}@${version}`,
      channels,
      inputSchema,
      nodes: compiled,
      ...(onBusy === undefined ? {} : { onBusy }),
      ...(concurrency === undefined ? {} : { concurrency }),
      initialState(value: Input): StateOf<C> {
        const base = Object.fromEntries(Object.entries(channels).map(([key, ch]) => [key, ch.initial()])) as StateOf<C>;
        if (!initialState) return base;
        // Initial values replace the defaults (they are not appended to them).
        return { ...base, ...stripUndefined(initialState(value)) } as StateOf<C>;
      },
      output: (state) => (output ? output(state) : waits ? withoutWaiting(state) : state),
      entry: (state) => outgoing(START, state),
      next(node: string, state: StateOf<C>): Task[] | Promise<Task[]> {
        const slash = node.indexOf('/');
        if (slash === -1) return outgoing(node, state);
        const parent = node.slice(0, slash);
        const subgraph = subgraphs.get(parent);
        if (!subgraph) throw new AgentqError('INTERNAL', `graph '${name}' has no node '${node}'`);
        return then(subgraph.next(node.slice(slash + 1), state as never), (inner) =>
          inner.length === 0
            ? outgoing(parent, state)
            : inner.map((task) => ({ ...task, node: `${parent}/${task.node}` })),
        );
      },
    };
    return Object.freeze(graph);
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as Promise<T> | undefined)?.then === 'function';
}

/** `f(value)`, awaiting `value` only when it is a promise (so sync routers stay sync). */
function then<T, U>(value: T | Promise<T>, f: (resolved: T) => U | Promise<U>): U | Promise<U> {
  return isPromise(value) ? value.then(f) : f(value);
}

function dedupe(tasks: Task[]): Task[] {
  const seen = new Set<string>();
  return tasks.filter((task) => {
    if (task.arg !== undefined) return true;
    if (seen.has(task.node)) return false;
    seen.add(task.node);
    return true;
  });
}

function withoutWaiting<S extends object>(state: S): S {
  const { [WAITING_KEY]: _waiting, ...rest } = state as Record<string, unknown>;
  return rest as S;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Merges the next-task lists of several finished tasks into the next superstep (joins run once). */
export function mergeNextTasks(lists: Task[][]): Task[] {
  return dedupe(lists.flat());
}
