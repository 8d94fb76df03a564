import type { Logger } from 'pino';
import type { Message, StepUsage } from '../contracts/run-record.js';
import type {
  CallbackOptions,
  InterruptOptions,
  NodeCallback,
  WaitForOptions,
  WaitOutcome,
} from '../contracts/wait-event.js';

/**
 * Services a worker hands to every node (language model, embedder, vector store, tools, …). Open so a
 * library user can add their own; the built-in ports are declared by the modules that own them.
 */
export interface Services {
  [name: string]: unknown;
}

/** Events a node may add to its run's stream; the engine adds the rest. */
export type NodeEventType = 'tool-call' | 'tool-result' | 'guardrail-pass' | 'guardrail-block' | 'guardrail-retry';

/** What a node gets besides the state. */
export interface NodeContext {
  readonly runId: string;
  readonly tenant: string;
  /** The run's graph id (tenant usage is counted per graph). @default unset in contexts outside a run */
  readonly graph?: string;
  /** The conversation the run continues (its enqueue's `conversationId`). @default unset: a lone run */
  readonly conversationId?: string;
  /** The superstep this step belongs to (0, 1, 2, …). */
  readonly stepIndex: number;
  /** Task index within the superstep (0 unless branches run in parallel). */
  readonly task: number;
  /** Stable id of this step within the run, e.g. `s3.t0`: use it to key memoised work. */
  readonly stepId: string;
  readonly node: string;
  /** 1 on the first attempt. */
  readonly attempt: number;
  /** The payload of a `Send` that scheduled this task, if any. */
  readonly arg: unknown;
  /** Fires on cancellation, timeout, deadline or worker shutdown; `reason` says which. */
  readonly abortSignal: AbortSignal;
  readonly logger: Logger;
  readonly services: Services;
  /**
   * The run's message history (loaded on demand: most nodes never need it). `from` skips the messages
   * before that index, so a node whose older messages were summarised (worker/agents/memory) reads only what
   * its prompt needs and its cost stays flat as the run grows. @default from 0 (the whole history)
   */
  history(options?: { from?: number }): Promise<Message[]>;
  /**
   * Pauses the run until someone answers `request` (`POST /v1/runs/:id/resume`, `agentq resume`): the
   * run becomes `waiting`; on resume this step runs again and `interrupt` returns the answer.
   * `options.callback` also puts a signed URL in the run's interrupt (`callbackUrl`) that answers it without
   * an API key, once (needs AGENTQ_CALLBACK_SECRET).
   */
  interrupt<T = unknown>(request: unknown, options?: InterruptOptions): T;
  /**
   * Paid work done at most once (docs/concepts/at-most-once.md): returns the result saved under `key` for this step if
   * an earlier attempt saved one; otherwise runs `compute`, saves its result, then returns it. Save
   * before acting on it, so a crash after the save does not pay again. `compute` gets `paid.confirm`:
   * call it right before the paid request leaves, so a delivery whose claim was taken over or
   * whose step was committed elsewhere meanwhile (a paused process) stops instead of paying again.
   */
  memo<T>(key: string, compute: (paid?: PaidCall) => Promise<T>, options?: MemoOptions): Promise<T>;
  /**
   * Adds model usage to this step. Record the usage of every response the step uses, memoised or
   * fresh: the engine counts a step's usage once, with its commit (or when it fails the run).
   */
  recordUsage(usage: StepUsage): void;
  /**
   * Adds a `tool-call`, `tool-result` or `guardrail-*` event to the run's stream (what producers follow
   * over SSE). At least once: a re-run step emits again.
   */
  emit(type: NodeEventType, data: Record<string, unknown>): Promise<void>;
  /**
   * Sends a piece of streamed model text to the run's live subscribers (SSE `token` events); `call`
   * names the model call within the step. Nothing durable: the committed message is the record.
   * Absent where nobody can listen (tests, library contexts). @default none
   */
  readonly streamText?: (text: string, call: string) => void;
  /**
   * Parks the step for `ms` (or until a time), holding no worker slot and no lock; the wake-up time is
   * fixed durably at the first call, so a re-run after a crash or a failover does not start it over. The
   * node runs again from its top when it wakes (keep paid work before it in `memo`), and `sleep` returns.
   */
  sleep(duration: number | { until: Date | string }): Promise<void>;
  /**
   * Parks the step until an event `name` (whose data has every field of `match`) is sent to the run or to
   * `key` (POST /v1/events, `client.sendEvent`, `agentq event send`), or until `timeoutMs` passes. Events
   * sent before the wait are kept for AGENTQ_EVENT_WINDOW_MS. As with `sleep`, the node runs again when
   * it wakes, and this call then resolves with the event (each event reaches a run once) or `{timedOut}`.
   */
  waitFor<T = unknown>(name: string, options?: WaitForOptions): Promise<WaitOutcome<T>>;
  /**
   * A signed, single-use URL that completes a wait of this step (docs/guides/durable-waits.md): hand
   * `url` to a third party, then `await cb.wait()`, which parks the step until a POST to it (its JSON body
   * is the result) or `timeoutMs`. The URL is the same when the node runs again, so a crash between
   * handing it out and parking loses nothing. Needs AGENTQ_CALLBACK_SECRET.
   */
  callback<T = unknown>(options?: CallbackOptions): Promise<NodeCallback<T>>;
  /** Tokens the run may still spend under its budget, or null without a budget. */
  readonly tokenBudgetRemaining: number | null;
  /**
   * Starts a child run of another served graph, in this run's tenant, with its own record and steps
   * (docs/guides/child-runs.md). Created at most once: its id comes from this run, this step and
   * `idempotencyKey` (else the call's place among this step's `runGraph` calls), so a step run again
   * finds the child it started. With `wait` (the default) the step parks, holding no worker, until the
   * child ends, then returns the child's output, or throws CHILD_RUN_FAILED (details: the child's id,
   * status and error) when it failed or was cancelled. `wait: false` returns `{ runId }` at once.
   */
  runGraph<T = unknown>(graph: string, input: unknown, options?: RunGraphOptions & { wait?: true }): Promise<T>;
  runGraph(graph: string, input: unknown, options: RunGraphOptions & { wait: false }): Promise<{ runId: string }>;
  /**
   * `runGraph` for many children at once (fan-out), and the step waits for them all (fan-in): their outputs
   * in the order asked, or CHILD_RUN_FAILED for the first (in that order) that failed. `wait: false`: their ids.
   */
  runGraphs<T = unknown>(calls: readonly ChildRunCall[], options?: { wait?: true }): Promise<T[]>;
  runGraphs(calls: readonly ChildRunCall[], options: { wait: false }): Promise<{ runId: string }[]>;
}

/** How `runGraph` starts its child. */
export interface RunGraphOptions {
  /** Park until the child ends and return its output. @default true */
  wait?: boolean;
  /** Names the child within this step: a step that starts children in a varying order should give one. @default the call's place */
  idempotencyKey?: string;
  /** The graph's version. @default the newest a worker serves */
  graphVersion?: string;
}

/** One child of `runGraphs`. */
export interface ChildRunCall {
  graph: string;
  input: unknown;
  /** @default its place in the list (after the step's earlier calls) */
  idempotencyKey?: string;
  graphVersion?: string;
}

/** What a memoised call asked (time travel), besides its key. */
export interface MemoOptions {
  /**
   * The request as plain JSON (a model request; a tool's name and arguments). A run that records
   * (AGENTQ_RECORDING=full) keeps its fingerprint with the result; a replay answers the call from the
   * recording only when the fingerprints match, and reports the difference otherwise.
   * @default none: recorded and replayed without a comparison
   */
  request?: unknown;
}

/** What `memo` hands its computation: the last check before paying. */
export interface PaidCall {
  /** Throws (a stale-step abort) when this delivery's claim or the run's cursor moved on; else resolves. */
  confirm(): Promise<void>;
}
