import type { z } from 'zod';
import type { Message } from '../contracts/run-record.js';
import type { OnBusy } from '../contracts/job-schema.js';
import type { Channels, StateOf, UpdateOf } from './channels.js';
import type { NodeContext } from './node-context.js';
import type { RetryPolicy } from './retry-policy.js';

/** A graph's concurrency key, derived from a run's input, and the key's limit (defineGraph's `concurrency`). */
export interface GraphConcurrency<Input = unknown> {
  key: (input: Input) => string | null | undefined;
  limit: number;
}

export const START = '__start__';
export const END = '__end__';
/**
 * The state key where a graph with `ready` nodes keeps its waiting tasks (reserved; only such graphs
 * have it). Kept in the state so that a commit, a fork and a replay carry it like any other key.
 */
export const WAITING_KEY = '__waiting';
type End = typeof END;

/** Schedules `node` with its own payload (`context.arg`): fan-out of one node over many inputs. */
export class Send {
  constructor(
    readonly node: string,
    readonly arg: unknown,
  ) {}
}

/** One task of a superstep. */
export interface Task {
  node: string;
  arg?: unknown;
}

export type RouteTarget = string | Send;
export type RouteResult = RouteTarget | End | readonly (RouteTarget | End)[];
/** Picks the next node(s) from the state; may be async (e.g. a classifier call), then `next` returns a promise. */
export type Router<S> = (state: Readonly<S>) => RouteResult | Promise<RouteResult>;

/** A node's result: a state update, plus messages to append to the run's history. */
export type NodeResult<C extends Channels> = UpdateOf<C> & { messages?: Message[] };

export type NodeFunction<C extends Channels> = (
  state: Readonly<StateOf<C>>,
  context: NodeContext,
) => NodeResult<C> | void | Promise<NodeResult<C> | void>;

/** How a node runs; `S` is the graph's state (a node's `ready` reads it). */
export interface NodeOptions<S = Record<string, unknown>> {
  retry?: Partial<RetryPolicy>;
  /** Abort the step after this long (the node's AbortSignal fires; the attempt fails retryably). */
  timeoutMs?: number;
  /**
   * Run this node in the job of the step before it, when it is that step's only next task — a router,
   * reducer or pure transform of state. It is still its own step (step record, events, fenced commit,
   * in the same script as the step before), but it has no BullMQ job of its own: no Bull Board row,
   * attempts or backoff. It must not call models or paid tools: its context refuses memo, history,
   * interrupt and recordUsage, and a node that throws (or uses them) simply runs as its own job instead.
   * Events it emits are written with its commit, between its step-start and step-end.
   * @default false
   */
  inline?: boolean;
  /**
   * Whether the node may run on this state: sync and pure (it is asked again on replay and time travel).
   * A task routed to a node that is not ready waits, without a job or a worker, and is asked again after
   * each later superstep commits; when nothing else is left to run and it is still not ready, the run
   * fails with NODE_NOT_READY. @default always ready
   */
  ready?: (state: Readonly<S>) => boolean;
}

export interface CompiledNode<C extends Channels = Channels> {
  readonly name: string;
  readonly run: NodeFunction<C>;
  readonly retry: RetryPolicy;
  readonly timeoutMs?: number;
  /** NodeOptions.inline */
  readonly inline?: boolean;
  /** NodeOptions.ready */
  readonly ready?: (state: Readonly<StateOf<C>>) => boolean;
}

/** A built graph: immutable, registered by `name@version`. */
export interface Graph<C extends Channels = Channels, Input = unknown> {
  readonly name: string;
  readonly version: string;
  /** `name@version` */
  readonly id: string;
  readonly channels: C;
  readonly inputSchema: z.ZodType<Input>;
  readonly nodes: ReadonlyMap<string, CompiledNode<C>>;
  /** What a conversation's new turn does while the previous one is unfinished (a run's `onBusy` wins). @default 'queue' */
  readonly onBusy?: OnBusy;
  /** How a run's concurrency key is derived from its input, when the run names none. */
  readonly concurrency?: GraphConcurrency<Input>;
  initialState(input: Input): StateOf<C>;
  output(state: StateOf<C>): unknown;
  /** Tasks of the first superstep (a promise only when a router on the way is async). */
  entry(state: StateOf<C>): Task[] | Promise<Task[]>;
  /** Tasks after `node` ran; [] means the branch reached END (a promise only when its router is async). */
  next(node: string, state: StateOf<C>): Task[] | Promise<Task[]>;
}

/** A graph of any state shape and input (registries and worker options hold many). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- graphs of any state shape
export type AnyGraph = Graph<any, any>;
