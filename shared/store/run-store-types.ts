import type { Concurrency, OnBusy } from '../contracts/job-schema.js';
import type { RedisConnection } from '../redis/connect-redis.js';
import type { Message, StepRecord, RunStatus, Usage } from '../contracts/run-record.js';
import type { Task } from '../graph/graph.js';
import type { TokenLogOptions } from './token-log.js';
import type { FairArgs } from './fair-queue.js';

export interface NewRun {
  id: string;
  tenant: string;
  graph: string;
  graphVersion?: string;
  input: unknown;
  maxSteps: number;
  deadlineAt?: number;
  tokenBudget?: number;
  idempotencyKey?: string;
  webhookUrl?: string;
  batchId?: string;
  /** The schedule whose tick started this run. */
  scheduleId?: string;
  /** The conversation this run continues (its history starts from the conversation's latest completed run). */
  conversationId?: string;
  /** What the run does while its conversation's previous turn is unfinished; absent: its graph's default. */
  onBusy?: OnBusy;
  /** The run's concurrency key and its limit (ConcurrencyKeys): it is taken in while its key has a slot. */
  concurrency?: Concurrency;
  /** BullMQ priority of the run's step jobs (1 most urgent; absent or 0: none, the wait list). */
  priority?: number;
  /** A replay's original run: its recorded calls answer this run's. */
  replay?: { runId: string; live: boolean };
  /** The run and step that started this one (a child run), and whether that step waits for it. */
  parent?: { runId: string; step: string; wait: boolean; span?: string };
  now: number;
}

/** A run's start job, added by `create` in the run's own script (the queue keys of the run's shard). */
export interface StartJob {
  /** The queue keys adding the job touches (the BullMQ seam's addJobKeys), declared by the script. */
  queueKeys: string[];
  /** The queue's key prefix (`bull:{s0}:agentq-steps:`). */
  queuePrefix: string;
  jobId: string;
  name: string;
  data: object;
  attempts: number;
  /** Weighted fairness (AGENTQ_TENANT_WEIGHTS): the start job's priority is decided as it is added. */
  fair?: FairArgs;
  /**
   * A worker's slot the start job is taken into as it is added (BatchDispatcher's next question, started
   * by the worker whose run freed the batch's slot): active, locked with `token`, when BullMQ would hand
   * it out next. @default none: the job waits in the queue
   */
  take?: StartSlot;
}

/** The lock a worker takes a start job with, in the slot its finished job left free. */
export interface StartSlot {
  token: string;
  lockDurationMs: number;
  /** BullMQ's `pb` of the job (the worker's name); '' none. */
  workerName: string;
  /** The key prefix of the step queue the slot's worker takes from: only a start job of that queue (shard) goes into it. */
  queuePrefix: string;
}

/** What one task of a superstep wrote: its state update and the messages it appends. */
export interface TaskWrite {
  node: string;
  update: Record<string, unknown>;
  messages: Message[];
}

export interface CommitRequest {
  runId: string;
  superstep: number;
  task: number;
  mode: 'single' | 'task' | 'advance';
  step?: Omit<StepRecord, 'index'>;
  write?: TaskWrite;
  totalTasks: number;
  outcome: { kind: 'next'; tasks: Task[] } | { kind: 'completed'; output: unknown };
  /** Serialised values of the state keys that changed. */
  state: Record<string, unknown>;
  /** `state` already serialised (JSON per key), when the caller has it: it is then not serialised again. */
  stateJson?: Record<string, string>;
  messages: Message[];
  /** The step's model usage, added to the run's. */
  usage?: Usage;
  /**
   * false: the step had no memos (none came with its BEGIN and it saved none), so the commit does not
   * drop its memo field. A duplicate delivery's memo saved meanwhile is then left to expire with the
   * run's keys; it is never read again (its superstep is past). @default true
   */
  memos?: boolean;
}

export type CommitResult =
  | { kind: 'fenced' | 'missing' }
  /** Not committed: the run's deadline passed before the step ended; the worker fails the run. */
  | { kind: 'deadline' }
  | { kind: 'stored'; index: number; count: number }
  | { kind: 'advanced' | 'completed' | 'cancelled'; index: number };

export interface ListFilter {
  status?: RunStatus;
  graph?: string;
  /** Only runs created at or after this time (ms since the epoch). */
  since?: number;
  /** Only runs created before this time (ms since the epoch). */
  until?: number;
  /** Only runs whose error has this code (failed or cancelled runs), e.g. PROVIDER_ERROR. */
  errorCode?: string;
  /** @default 50 */
  limit?: number;
  cursor?: string;
}

export interface RunStoreOptions {
  keyPrefix?: string;
  /** AGENTQ_SHARDS: which shard's hash tag a run's keys carry. @default 1 */
  shards?: number;
  /** @default 7 days */
  retentionSeconds?: number;
  /** @default 1000 */
  eventsMaxLen?: number;
  /** The token logs of followed runs (AGENTQ_TOKEN_LOG_*). @default 2000 tokens, 15 minutes */
  tokenLog?: TokenLogOptions;
  /** What runs created through this store record for time travel (AGENTQ_RECORDING*). @default full, 1 MiB */
  recording?: RecordingOptions;
  /**
   * Called after this store moved a run to completed, failed or cancelled (webhooks, metrics). Errors
   * are the hook's own business: they are caught and do not undo the transition.
   */
  onFinished?: (runId: string, status: 'completed' | 'failed' | 'cancelled', run: FinishedRun) => Promise<void>;
  /**
   * The connection for BEGIN and COMMIT, a step's two scripts. A worker's step queue shares it, so a
   * step's next job goes out right behind its commit. Not the store's own connection: BullMQ defines
   * its ~50 scripts on the connections it uses, and ioredis copies them all into every pipeline and
   * MULTI made on such a connection (~45 µs each, from a CPU profile). @default the store's connection
   */
  stepRedis?: RedisConnection;
}

/** What the finish hooks need to know of a finished run, read once for all of them. */
export interface FinishedRun {
  tenant: string | null;
  webhookUrl: string | null;
  batchId: string | null;
  /** The conversation the run is a turn of: its place there is freed (ConversationTurns). */
  conversationId?: string | null;
  /** The run's concurrency key and limit: its slot there is handed on (ConcurrencyKeys). */
  concurrency?: Concurrency | null;
  /** Length of the run's output as stored (JSON), for the tenant's storage budget; 0 without one. */
  outputBytes: number;
  /** The run's graph and the version it ran (null: never taken in), for the runs-per-version metrics. */
  graph?: string | null;
  graphVersion?: string | null;
  /**
   * A batch's run, finished by a step's commit: its usage fields as the commit read them (the batch's
   * RUN_FIELDS, null where unset), so the batch's slot is freed without reading them back. @default unread
   */
  usageFields?: (string | null)[];
}

/** What a run records for fork and replay: AGENTQ_RECORDING and AGENTQ_RECORDING_MAX_BYTES. */
export interface RecordingOptions {
  mode: 'full' | 'steps' | 'off';
  maxBytes: number;
}
