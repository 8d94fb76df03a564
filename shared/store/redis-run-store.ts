import type { RedisConnection } from '../adapters/redis/connect-redis.js';
import type { ErrorRecord } from '../contracts/errors.js';
import type {
  Message,
  PendingInterrupt,
  RunEvent,
  RunEventType,
  RunRecord,
  RunStatus,
  StepRecord,
  Usage,
} from '../contracts/run-record.js';
import type { Task } from '../graph/graph.js';
import type { BeginResult } from './begin-reply.js';
import type { Keys } from './keys.js';
import { parseMeta, toRunRecord, type RunMeta, type StepMeta } from './run-meta.js';
import { RunCreation } from './run-creation.js';
import { RunEvents, type EventReadOptions } from './run-events.js';
import { RunLifecycle } from './run-lifecycle.js';
import { RunReads } from './run-reads.js';
import { RunRetention } from './run-retention.js';
import { RunStoreContext } from './run-store-context.js';
import type {
  CommitRequest,
  CommitResult,
  ListFilter,
  NewRun,
  RunStoreOptions,
  StartJob,
  TaskWrite,
} from './run-store-types.js';
import { StepCommits } from './step-commits.js';
import { RunRecordings } from './recordings/run-recordings.js';
import { RunForks } from './forks/run-forks.js';

export { parseBeginReply, type BeginResult } from './begin-reply.js';
export type { EventReadOptions } from './run-events.js';
export type {
  CommitRequest,
  CommitResult,
  FinishedRun,
  ListFilter,
  NewRun,
  RecordingOptions,
  RunStoreOptions,
  StartJob,
  TaskWrite,
} from './run-store-types.js';
export { parseStateText, type StateText } from './state-text.js';
export { parseMeta, toRunRecord, type RunMeta, type StepMeta };

/**
 * The run store on Redis (docs/reference/redis-layout.md): meta, state, messages, steps, events and writes of each run
 * under one hash tag; tenant and active-run indexes beside them. Every change to a run goes through a fenced
 * Lua script (run-scripts.ts); index updates are separate commands, ordered so a crash leaves at worst
 * a stale index entry that readers skip and the reconciler removes.
 *
 * A facade over its roles, one file each: admission (create, admit), step commits (begin, commit, memos,
 * usage), the lifecycle (finish, cancel, retry, interrupt, resume), reads, events, and retention.
 */
export class RedisRunStore {
  readonly keys: Keys;
  readonly retentionSeconds: number;
  readonly eventsMaxLen: number;
  /** Time travel's recordings of paid calls (time travel; the commit scripts record the rest). */
  readonly recordings: RunRecordings;
  /** Forks of finished or waiting runs from any recorded step. */
  readonly forks: RunForks;
  private readonly creation: RunCreation;
  private readonly stepCommits: StepCommits;
  private readonly lifecycle: RunLifecycle;
  private readonly reads: RunReads;
  private readonly eventStream: RunEvents;
  private readonly retention: RunRetention;

  constructor(
    readonly redis: RedisConnection,
    options: RunStoreOptions = {},
  ) {
    const context = new RunStoreContext(redis, options);
    this.keys = context.keys;
    this.retentionSeconds = context.retentionSeconds;
    this.eventsMaxLen = context.eventsMaxLen;
    this.creation = new RunCreation(context);
    this.stepCommits = new StepCommits(context);
    this.reads = new RunReads(context);
    this.lifecycle = new RunLifecycle(context, this.reads);
    this.eventStream = new RunEvents(context);
    this.retention = new RunRetention(context);
    this.recordings = new RunRecordings(context);
    this.forks = new RunForks(context);
  }

  // Creation (run-creation.ts)
  create(run: NewRun, start?: StartJob, retried = false): Promise<{ created: boolean; meta: RunMeta }> {
    return this.creation.create(run, start, retried);
  }

  admit(
    runId: string,
    graphVersion: string,
    state: Record<string, unknown>,
    tasks: Task[],
    now: number,
    runTrace = '',
    messages: readonly Message[] = [],
    start?: { task: number; data: Record<string, unknown> },
  ): Promise<{ admitted: string; started?: Extract<BeginResult, { kind: 'run' }> }> {
    return this.creation.admit(runId, graphVersion, state, tasks, now, runTrace, messages, start);
  }

  // Step commits (step-commits.ts)
  begin(
    runId: string,
    superstep: number,
    task: number,
    startData: Record<string, unknown>,
    now: number,
    cachedSuperstep?: number,
  ): Promise<BeginResult> {
    return this.stepCommits.begin(runId, superstep, task, startData, now, cachedSuperstep);
  }

  commitArgs(request: CommitRequest, now: number): (string | number)[] {
    return this.stepCommits.commitArgs(request, now);
  }

  committed(runId: string, reply: string[]): Promise<CommitResult> {
    return this.stepCommits.committed(runId, reply);
  }

  commit(request: CommitRequest, now: number): Promise<CommitResult> {
    return this.stepCommits.commit(request, now);
  }

  writes(runId: string): Promise<Map<number, TaskWrite>> {
    return this.stepCommits.writes(runId);
  }

  addUsage(runId: string, usage: Usage): Promise<void> {
    return this.stepCommits.addUsage(runId, usage);
  }

  memoPut(runId: string, stepId: string, memos: Record<string, unknown>): Promise<void> {
    return this.stepCommits.memoPut(runId, stepId, memos);
  }

  // Lifecycle (run-lifecycle.ts)
  finish(
    runId: string,
    status: 'failed' | 'cancelled',
    error: ErrorRecord,
    now: number,
    fence: { superstep?: number; onlyFrom?: RunStatus } = {},
  ): Promise<'ok' | 'missing' | 'terminal' | 'fenced'> {
    return this.lifecycle.finish(runId, status, error, now, fence);
  }

  requestCancel(runId: string, now: number): Promise<RunStatus | 'missing'> {
    return this.lifecycle.requestCancel(runId, now);
  }

  retry(runId: string, now: number, failedAt?: number): Promise<{ superstep: number; tasks: Task[] }> {
    return this.lifecycle.retry(runId, now, failedAt);
  }

  interrupt(
    runId: string,
    superstep: number,
    interrupt: PendingInterrupt,
    now: number,
  ): Promise<'ok' | 'missing' | 'fenced'> {
    return this.lifecycle.interrupt(runId, superstep, interrupt, now);
  }

  resume(runId: string, value: unknown, now: number): Promise<{ superstep: number }> {
    return this.lifecycle.resume(runId, value, now);
  }

  // Reads (run-reads.ts)
  get(runId: string): Promise<RunMeta | null> {
    return this.reads.get(runId);
  }

  record(runId: string): Promise<RunRecord | null> {
    return this.reads.record(runId);
  }

  state(runId: string): Promise<Record<string, unknown>> {
    return this.reads.state(runId);
  }

  steps(runId: string): Promise<StepRecord[]> {
    return this.reads.steps(runId);
  }

  messages(runId: string, from = 0): Promise<Message[]> {
    return this.reads.messages(runId, from);
  }

  list(tenant: string, filter: ListFilter = {}): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
    return this.reads.list(tenant, filter);
  }

  // Events (run-events.ts)
  addEvent(runId: string, type: RunEventType, data: Record<string, unknown>): Promise<void> {
    return this.eventStream.addEvent(runId, type, data);
  }

  events(runId: string, options: EventReadOptions = {}): Promise<RunEvent[]> {
    return this.eventStream.events(runId, options);
  }

  // Retention and indexes (run-retention.ts)
  purge(runId: string, tenant: string): Promise<void> {
    return this.retention.purge(runId, tenant);
  }

  trimTenantIndexes(now: number, limit = 500): Promise<number> {
    return this.retention.trimTenantIndexes(now, limit);
  }

  activeRunIds(limit = 10_000): Promise<string[]> {
    return this.retention.activeRunIds(limit);
  }

  forgetActive(runId: string): Promise<void> {
    return this.retention.forgetActive(runId);
  }
}
