import type { RedisConnection } from '../redis/connect-redis.js';
import type { Keys } from './keys.js';
import { parseMeta, toRunRecord, type RunMeta, type StepMeta } from './run-meta.js';
import { RunCreation } from './run-creation.js';
import { RunEvents } from './run-events.js';
import { RunLifecycle } from './run-lifecycle.js';
import { RunReads } from './run-reads.js';
import { RunRetention } from './run-retention.js';
import { RunIndexRepair } from './run-index-repair.js';
import { RunStoreContext } from './run-store-context.js';
import type { RunStoreOptions } from './run-store-types.js';
import { StepCommits } from './step-commits.js';
import { RunRecordings } from './recordings/run-recordings.js';
import { RunForks } from './forks/run-forks.js';
import { TokenLog } from './token-log.js';

export { parseBeginReply, type BeginResult } from './begin-reply.js';
export type { EventReadOptions } from './run-events.js';
export type { ReindexPass, ReindexPassOptions, ReindexPosition } from './run-index-repair.js';
export type {
  CommitRequest,
  CommitResult,
  FinishedRun,
  ListFilter,
  NewRun,
  RecordingOptions,
  RunStoreOptions,
  StartJob,
  StartSlot,
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
 * Its roles, one file each, are its members: a caller names the role it uses (`store.reads.get(id)`,
 * `store.commits.begin(...)`), so a role's signature is written once, in its own file.
 */
export class RedisRunStore {
  readonly keys: Keys;
  readonly retentionSeconds: number;
  readonly eventsMaxLen: number;
  /** Time travel's recordings of paid calls (time travel; the commit scripts record the rest). */
  readonly recordings: RunRecordings;
  /** Forks of finished or waiting runs from any recorded step. */
  readonly forks: RunForks;
  /** Creating a run (with its start job) and taking it in: create, admit. */
  readonly creation: RunCreation;
  /** A step's fenced moves: begin, commit (commitArgs, committed), writes, usage, memos. */
  readonly commits: StepCommits;
  /** finish, cancel, retry, interrupt, resume. */
  readonly lifecycle: RunLifecycle;
  /** get, record, state, steps, messages, list. */
  readonly reads: RunReads;
  /** A run's event stream: addEvent, events. */
  readonly eventLog: RunEvents;
  /** purge, tenant index trimming, the active-run index. */
  readonly retention: RunRetention;
  /** Live tokens kept while someone follows a run: append (workers), watch and read (followers). */
  readonly tokenLog: TokenLog;
  /** Rebuilding the tenants' run lists from the runs that exist, a bounded SCAN pass at a time. */
  readonly indexRepair: RunIndexRepair;

  constructor(
    readonly redis: RedisConnection,
    options: RunStoreOptions = {},
  ) {
    const context = new RunStoreContext(redis, options);
    this.keys = context.keys;
    this.retentionSeconds = context.retentionSeconds;
    this.eventsMaxLen = context.eventsMaxLen;
    this.creation = new RunCreation(context);
    this.commits = new StepCommits(context);
    this.reads = new RunReads(context);
    this.lifecycle = new RunLifecycle(context, this.reads);
    this.eventLog = new RunEvents(context);
    this.retention = new RunRetention(context);
    this.indexRepair = new RunIndexRepair(context);
    this.recordings = new RunRecordings(context);
    this.forks = new RunForks(context);
    this.tokenLog = new TokenLog(redis, context.keys, options.tokenLog);
  }
}
