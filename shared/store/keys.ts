import { DEFAULT_KEY_PREFIX } from '../contracts/queues.js';
import { shardOf, shardTag } from '../contracts/shards.js';
import type { DocumentKeys } from './document-keys.js';

export type { DocumentKeys } from './document-keys.js';

/**
 * Every Redis key of the run store is built here (docs/reference/redis-layout.md). One run's keys carry its shard's
 * hash tag (`agentq:{s<k>}:run:<id>:meta`), the tag of the shard's step queue too, so the step transition — a
 * Lua script over the run's keys and that queue's keys — stays in one Redis Cluster slot.
 * BullMQ's keys are BullMQ's business (its own prefix); nothing here touches them.
 */
export { DEFAULT_KEY_PREFIX };

/** A run's keys in the order the Lua scripts take them (KEYS[1] … KEYS[8]). */
export const RUN_KEY_SUFFIXES = ['meta', 'state', 'messages', 'steps', 'events', 'writes', 'memo', 'record'] as const;

interface RunKeys {
  meta: string;
  state: string;
  messages: string;
  steps: string;
  events: string;
  /** Writes of the tasks of the current superstep, by task index (parallel branches). */
  writes: string;
  /** Memoised paid work (model responses), by step. */
  memo: string;
  /**
   * Hash: the run's recording for time travel (AGENTQ_RECORDING), kept beside the memo and
   * expiring with the run: `b<k>` the state change, history length and tasks before superstep k (fork),
   * `w<k>.t<i>` a parallel task's write, `k:<stepId>:<memo key>` a paid call's request fingerprint and
   * response (replay), `c:<hash>` a message or tool list those requests name, `bytes` the JSON kept,
   * `over` the first field the byte budget refused (shared/store/recordings/).
   */
  record: string;
}

const BATCH_PARTS = ['meta', 'items', 'inflight', 'lock', 'done', 'usage', 'holds'] as const;

/** One batch's Batch API keys (Keys.providerBatch). */
interface ProviderBatchKeys {
  pending: string;
  bodies: string;
  calls: string;
  flushes: string;
  seq: string;
  flush(flushId: string): string;
}

export class Keys {
  /** `shards`: AGENTQ_SHARDS; every process of a deployment must use the same value. */
  constructor(
    readonly prefix: string = DEFAULT_KEY_PREFIX,
    readonly shards = 1,
  ) {}

  /** The shard a run lives on. */
  shardOf(runId: string): number {
    return shardOf(runId, this.shards);
  }

  /** What a run's keys start with, before `<id>:meta`: Lua builds a fetched job's run keys from it. */
  runKeyPrefix(shard: number): string {
    return `${this.prefix}:${shardTag(shard, this.shards)}:run:`;
  }

  /**
   * What a worker process's liveness keys start with on a shard, before `<process id>`: a string with a
   * short TTL that the process's heartbeat thread refreshes. Under the shard's tag, so the paid-work claim
   * script (memo hash of a run of that shard + its claimant's liveness) stays in one Cluster slot.
   */
  alivePrefix(shard: number): string {
    return `${this.prefix}:${shardTag(shard, this.shards)}:alive:`;
  }

  /**
   * SET of the worker processes with a liveness thread (their process ids), under shard 0's tag beside
   * their shard-0 liveness keys: each thread checks the others' keys and releases the job locks of a
   * process whose key has lapsed (liveness-thread.ts), so its jobs run again within seconds.
   */
  livenessRegistry(): string {
    return `${this.prefix}:${shardTag(0, this.shards)}:procs`;
  }

  /**
   * Stream an API process adds to when a run's events start being followed, to wake its multiplexed
   * reader (RunEventHub) out of an XREAD BLOCK that does not yet name that run. Under the shard's tag, so
   * one XREAD covers it and the shard's runs' event streams in one Cluster slot; `hubId` is the process's.
   */
  eventsWake(shard: number, hubId: string): string {
    return `${this.prefix}:${shardTag(shard, this.shards)}:events-wake:${hubId}`;
  }

  /** ZSET of `<graph id> <worker id>` → last heartbeat (ms): the graphs live workers serve (ServedGraphs). */
  servedGraphs(): string {
    return `${this.prefix}:graphs:served`;
  }

  run(runId: string): RunKeys {
    const base = this.runBase(runId);
    return {
      meta: `${base}:meta`,
      state: `${base}:state`,
      messages: `${base}:messages`,
      steps: `${base}:steps`,
      events: `${base}:events`,
      writes: `${base}:writes`,
      memo: `${base}:memo`,
      record: `${base}:record`,
    };
  }

  /** A run's meta key alone (the step transition builds the others from it). */
  runMeta(runId: string): string {
    return `${this.runBase(runId)}:meta`;
  }

  /** All keys of a run, in RUN_KEY_SUFFIXES order (scripts that expire or delete a run take them all). */
  runAll(runId: string): string[] {
    const base = this.runBase(runId);
    return RUN_KEY_SUFFIXES.map((suffix) => `${base}:${suffix}`);
  }

  /** What a run's keys start with: its shard's run key prefix and its id. */
  private runBase(runId: string): string {
    return `${this.runKeyPrefix(this.shardOf(runId))}${runId}`;
  }

  /** A run's waits (hash: open waits, outcomes, events taken) and its inbox (zset of events sent before a wait). */
  runWaits(runId: string): { waits: string; inbox: string } {
    return { waits: `${this.runBase(runId)}:waits`, inbox: `${this.runBase(runId)}:inbox` };
  }

  /** A tenant's correlation key, on a tag of its own: its open waits and its recent events (zsets). */
  eventKey(tenant: string, key: string): { waiters: string; buffer: string } {
    const base = `${this.prefix}:{evk:${tenant}:${key}}`;
    return { waiters: `${base}:waiters`, buffer: `${base}:events` };
  }

  /** A tenant's debounce (pending run), throttle (recent starts) or concurrency key (KeyedSlots), on a tag of its own. */
  flowKey(tenant: string, kind: 'debounce' | 'throttle' | 'concurrency', key: string): string {
    return `${this.prefix}:{flow:${tenant}:${kind}:${key}}`;
  }

  /** The first engine's meta key of a run (tag `{run:<id>}`): read only to refuse an undrained upgrade. */
  legacyRunMeta(runId: string): string {
    return `${this.prefix}:{run:${runId}}:meta`;
  }

  /** The AGENTQ_SHARDS the deployment's first worker started with; later processes must match it. */
  shardCount(): string {
    return `${this.prefix}:config:shards`;
  }

  /** A tenant's runs, scored by creation time (ms). */
  tenantRuns(tenant: string): string {
    return `${this.prefix}:t:${tenant}:runs`;
  }

  /** Every tenant that has had a run (a set): the reconciler trims their run lists. */
  tenants(): string {
    return `${this.prefix}:tenants`;
  }

  /** Runs not yet finished, scored by creation time; the reconciler sweeps these. */
  activeRuns(): string {
    return `${this.prefix}:runs:active`;
  }

  /** Pub/sub channel of a run's live model tokens (kept in `tokenLog` only while someone follows the run). */
  tokenChannel(runId: string): string {
    return `${this.runKeyPrefix(this.shardOf(runId))}${runId}:tokens`;
  }

  /** Stream of a run's live tokens while someone follows it (TokenLog), on its channel's hash tag. */
  tokenLog(runId: string): string {
    return `${this.runKeyPrefix(this.shardOf(runId))}${runId}:token-log`;
  }

  /** Pub/sub channel on which cancellations reach the workers running the step. */
  cancelChannel(): string {
    return `${this.prefix}:cancel`;
  }

  /** Mutual exclusion for the reconciler's sweep across workers. */
  reconcilerLock(): string {
    return `${this.prefix}:reconciler:lock`;
  }

  /** One family of `/metrics` counters (a hash), shared by workers and API processes. */
  metrics(family: string): string {
    return `${this.prefix}:metrics:${family}`;
  }

  /** The runs of one conversation of a tenant, scored by creation time (a later run continues the latest completed one). */
  conversation(tenant: string, conversationId: string): string {
    return `${this.prefix}:t:${tenant}:conversation:${conversationId}`;
  }

  /**
   * A conversation's unfinished turns by creation time (ConversationTurns): the first may run, the others
   * wait or are refused by their `onBusy`. Its scripts touch only this key: no hash tag needed.
   */
  conversationTurns(tenant: string, conversationId: string): string {
    return `${this.prefix}:t:${tenant}:conversation:${conversationId}:turns`;
  }

  /** A tenant's runs not yet finished (the API's per-tenant cap), scored by creation time. */
  tenantInflight(tenant: string): string {
    return `${this.prefix}:t:${tenant}:inflight`;
  }

  /** A tenant's unfinished runs counting toward its fair share (all but batch questions), by creation time (FairShare). */
  tenantLoad(tenant: string): string {
    return `${this.prefix}:t:${tenant}:load`;
  }

  /** Requests of one API key (by its hash id) in one rate-limit window. */
  apiRateLimit(keyId: string, window: number): string {
    return `${this.prefix}:api:rate:${keyId}:${window}`;
  }

  /** A dashboard sign-in session, by the sha256 of its cookie token (the token itself is never stored). */
  dashboardSession(tokenHash: string): string {
    return `${this.prefix}:api:session:${tokenHash}`;
  }

  /** A sign-in session's one-time notice for the next page it loads (the result of a page's action). */
  dashboardFlash(tokenHash: string): string {
    return `${this.prefix}:api:flash:${tokenHash}`;
  }

  /** Failed authentications of a subject (`addr:<client>`, `peer:<connection>`, `cred:<hash>`) in a window (429 past the limit). */
  authFailures(subject: string, window: number): string {
    return `${this.prefix}:api:authfail:${subject}:${window}`;
  }

  /** Sliding-window log of one provider+model's requests (member `<ms>:<id>:<tokens>`), shared by all workers. */
  providerLimit(provider: string, model: string): string {
    return `${this.prefix}:limits:{${provider}:${model}}`;
  }

  /**
   * One batch's keys, under one hash tag: meta (hash), items (list of JSON), inflight (set of run ids),
   * done, usage (hashes: a finished run's id → the status and usage its last finish counted; `n:<run id>`
   * its calls), holds (hash: a planned batch's call `<run id>|<step id>|<key>` → USD held while in flight).
   */
  batch(batchId: string): Record<(typeof BATCH_PARTS)[number], string> {
    const base = `${this.prefix}:{batch:${batchId}}`;
    return Object.fromEntries(BATCH_PARTS.map((part) => [part, `${base}:${part}`])) as Record<string, string>;
  }

  /** Hash: a tenant's rolling averages of one graph's batch questions (tokens, calls, ms per call by mode). */
  autopilotStats(tenant: string, graph: string): string {
    return `${this.prefix}:t:${tenant}:autopilot:${graph}`;
  }

  /** A tenant's batches, scored by creation time. */
  tenantBatches(tenant: string): string {
    return `${this.prefix}:t:${tenant}:batches`;
  }

  /** Batches still dispatching; the reconciler tops these up. */
  activeBatches(): string {
    return `${this.prefix}:batches:active`;
  }

  /**
   * One batch's model calls through the provider's Batch API, under the batch's hash tag so
   * each move of a call (registered, taken into a flush, answered) is one script: `pending` (zset custom
   * id → ms parked), `bodies` (hash custom id → request line), `calls` (hash custom id → the call's state
   * JSON), `flushes` (zset flush id → ms created), `seq` (the flush counter), `flush(id)` (hash: one
   * provider batch's record: its state machine's position, its usage).
   */
  providerBatch(batchId: string): ProviderBatchKeys {
    const base = `${this.prefix}:{batch:${batchId}}:pb`;
    return {
      pending: `${base}:pending`,
      bodies: `${base}:bodies`,
      calls: `${base}:calls`,
      flushes: `${base}:flushes`,
      seq: `${base}:seq`,
      flush: (flushId) => `${base}:flush:${flushId}`,
    };
  }

  /** Batches with model calls parked or provider batches unfinished (zset batch id → ms), the collector's work list. */
  providerBatchesActive(): string {
    return `${this.prefix}:pbatch:active`;
  }

  /** The collector's lease: one worker of the deployment collects, flushes and polls at a time. */
  providerBatchesLease(): string {
    return `${this.prefix}:pbatch:lease`;
  }

  /** Document ingestion keys of one tenant (see DocumentKeys). */
  documents(tenant: string): DocumentKeys {
    const base = `${this.prefix}:{docs:${tenant}}`;
    return {
      record: (docId) => `${base}:doc:${docId}`,
      collection: (collection) => `${base}:collection:${collection}`,
      collections: `${base}:collections`,
      blob: (docId, contentHash) => `${base}:blob:${docId}:${contentHash}`,
      upload: (uploadId) => `${base}:upload:${uploadId}`,
      batch: (batchId) => `${base}:batch:${batchId}`,
      batchResults: (batchId) => `${base}:batch:${batchId}:results`,
      vectorLease: (collection) => `${base}:vectors:lease:${collection}`,
      answer: (part) => `${base}:answer:${part}`,
    };
  }

  /**
   * SET of the collections whose chunks were written without vectors, as JSON `[tenant, collection]`:
   * what workers with an embedder look at to add them in the background (VectorBuilder). A member is
   * removed once its collection has none left to add.
   */
  vectorsPending(): string {
    return `${this.prefix}:vectors:pending`;
  }

  /**
   * A tenant's schedules under one hash tag `{sched:<tenant>}`: every schedule's definition (a hash, id →
   * JSON) and, per schedule, the runs its ticks started (a sorted set scored by the tick's time, ms).
   * The tenant is in every key, so no lookup can reach another tenant's schedule.
   */
  schedules(tenant: string): { definitions: string; runs(scheduleId: string): string } {
    const base = `${this.prefix}:{sched:${tenant}}`;
    return { definitions: `${base}:schedules`, runs: (scheduleId) => `${base}:schedule:${scheduleId}:runs` };
  }

  /**
   * A tenant's budget keys under one hash tag `{budget:<tenant>}` (one Cluster slot), so one Lua script
   * checks the limits and reserves or counts usage atomically: limits (hash), usage of one UTC day
   * (`YYYY-MM-DD`) or month (`YYYY-MM`) (hashes), live reservations (zset by expiry), settled call ids
   * (zset by time, so a re-delivered settle counts once).
   */
  tenantBudget(tenant: string): {
    limits: string;
    day(day: string): string;
    month(month: string): string;
    reservations: string;
    settled: string;
  } {
    const base = `${this.prefix}:{budget:${tenant}}`;
    return {
      limits: `${base}:limits`,
      day: (day) => `${base}:usage:day:${day}`,
      month: (month) => `${base}:usage:month:${month}`,
      reservations: `${base}:reservations`,
      settled: `${base}:settled`,
    };
  }

  /**
   * A tenant's stored bytes (StorageBudget), under its budget tag `{budget:<tenant>}` so one script reads
   * its limits beside them: total (string, bytes), charges (hash: run id or `doc:<id>` → bytes) and
   * expiry (zset: the same ids → when their bytes leave Redis, ms; +inf while a run is unfinished).
   */
  tenantStorage(tenant: string): { total: string; charges: string; expiry: string } {
    const base = `${this.prefix}:{budget:${tenant}}:storage`;
    return { total: `${base}:bytes`, charges: `${base}:charges`, expiry: `${base}:expiry` };
  }

  /**
   * A tenant's ledger of run bytes on one shard, on the shard's hash tag so every run script there charges
   * the bytes it stores in the same call: total (string, bytes), charges (hash: a run's meta key → bytes),
   * expiry (zset: the same meta keys → when their bytes leave Redis, ms; none while the run is unfinished).
   * The run's meta field `ledger` holds `base`; storage-functions.lua adds `:bytes`, `:charges`, `:expiry`.
   */
  tenantRunStorage(tenant: string, shard: number): { base: string; total: string; charges: string; expiry: string } {
    const base = `${this.prefix}:${shardTag(shard, this.shards)}:t:${tenant}:storage`;
    return { base, total: `${base}:bytes`, charges: `${base}:charges`, expiry: `${base}:expiry` };
  }

  /** The ledger (its base) a run's bytes are charged to: its tenant's on the run's shard. */
  runLedger(tenant: string, runId: string): string {
    return this.tenantRunStorage(tenant, this.shardOf(runId)).base;
  }
}
