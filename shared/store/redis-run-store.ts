import type { RedisConnection } from '../adapters/redis/connect-redis.js';
import { AgentqError, type ErrorRecord } from '../contracts/errors.js';
import type { Task } from '../graph/graph.js';
import { Keys } from './keys.js';
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
import { forgetScripts, runScript, runScriptSha } from '../adapters/redis/create-redis.js';
import { slotPipeline } from './slot-pipeline.js';
import {
  decodeCursor,
  encodeCursor,
  pairsToObject,
  parseEvent,
  parseMeta,
  parseState,
  parseStepMeta,
  runRecordOf,
  toRunRecord,
  type RunMeta,
  type StepMeta,
} from './run-meta.js';
import { CREATE_RUN_AND_START } from './step-transition-scripts.js';
import {
  ADMIT_RUN,
  BEGIN_STEP,
  CANCELLED_ERROR,
  COMMIT_STEP,
  CREATE_RUN,
  FINISH_RUN,
  INTERRUPT_RUN,
  REQUEST_CANCEL,
  RESUME_RUN,
  RETRY_RUN,
} from './run-scripts.js';

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
  /** BullMQ priority of the run's step jobs (1 most urgent; absent or 0: none, the wait list). */
  priority?: number;
  now: number;
}

export type BeginResult =
  | { kind: 'missing' }
  | { kind: 'skip' | 'stale' | 'written' | 'cancel'; status: RunStatus }
  | { kind: 'admit'; meta: RunMeta }
  | { kind: 'run'; meta: StepMeta; state: StateText | null; memos: Record<string, unknown> };

/**
 * A run's state as JSON text: `base`, one JSON object as BEGIN sent it, and `changed`, each field a
 * commit wrote since, as its JSON text. Null in a BEGIN reply: the caller said it holds the state at
 * this cursor (its StateCache). Text, not objects, so a cached state is exactly what a read would give.
 */
export interface StateText {
  base: string;
  changed: Record<string, string>;
}

/** The state a StateText stands for, as fresh objects. */
export function parseStateText(text: StateText): Record<string, unknown> {
  const state = JSON.parse(text.base) as Record<string, unknown>;
  for (const [key, value] of Object.entries(text.changed)) state[key] = JSON.parse(value);
  return state;
}

/** A run's start job, added by `create` in the run's own script (the queue keys of the run's shard). */
export interface StartJob {
  /** addStandardJob's KEYS (wait, paused, meta, id, completed, delayed, active, events, marker), then prioritized, pc. */
  queueKeys: string[];
  /** The queue's key prefix (`bull:{s0}:agentq-steps:`). */
  queuePrefix: string;
  jobId: string;
  name: string;
  data: object;
  attempts: number;
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
  /** Not committed: the run's deadline passed before the step ended (issue 34); the worker fails the run. */
  | { kind: 'deadline' }
  | { kind: 'stored'; index: number; count: number }
  | { kind: 'advanced' | 'completed' | 'cancelled'; index: number };

export interface ListFilter {
  status?: RunStatus;
  graph?: string;
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
}

/**
 * The run store on Redis (DESIGN §3): meta, state, messages, steps, events and writes of each run under
 * one hash tag; tenant and active-run indexes beside them. Every change to a run goes through a fenced
 * Lua script (run-scripts.ts); index updates are separate commands, ordered so a crash leaves at worst
 * a stale index entry that readers skip and the reconciler removes.
 */
export class RedisRunStore {
  readonly keys: Keys;
  readonly retentionSeconds: number;
  readonly eventsMaxLen: number;
  private readonly onFinished: RunStoreOptions['onFinished'];
  private readonly stepRedis: RedisConnection;

  constructor(
    readonly redis: RedisConnection,
    {
      keyPrefix,
      shards = 1,
      retentionSeconds = 7 * 24 * 3600,
      eventsMaxLen = 1000,
      onFinished,
      stepRedis,
    }: RunStoreOptions = {},
  ) {
    this.stepRedis = stepRedis ?? redis;
    this.keys = new Keys(keyPrefix, shards);
    this.retentionSeconds = retentionSeconds;
    this.eventsMaxLen = eventsMaxLen;
    this.onFinished = onFinished;
  }

  private async finished(runId: string, status: 'completed' | 'failed' | 'cancelled'): Promise<void> {
    // One round trip for the index and for what every hook needs, instead of one per hook (on a Cluster,
    // one per slot, at once: the index is a key of its own).
    const replies = await slotPipeline(this.redis)
      .zrem(this.keys.activeRuns(), runId)
      .hmget(this.keys.run(runId).meta, 'tenant', 'webhookUrl', 'batchId')
      .exec();
    const [tenant = null, webhookUrl = null, batchId = null] =
      (replies?.[1]?.[1] as (string | null)[] | undefined) ?? [];
    await this.onFinished?.(runId, status, { tenant, webhookUrl, batchId }).catch(() => undefined);
  }

  private script<T>(lua: string, runId: string, args: (string | number)[]): Promise<T> {
    return runScript<T>(this.redis, lua, this.keys.runAll(runId), args);
  }

  /**
   * Creates the run unless its id is taken (→ the existing run). With `start`, the run's start job is
   * added in the same script (and again for an existing run never taken in): one round trip per enqueue.
   */
  async create(run: NewRun, start?: StartJob, retried = false): Promise<{ created: boolean; meta: RunMeta }> {
    const fields: Record<string, string | number> = {
      id: run.id,
      tenant: run.tenant,
      status: 'queued',
      graph: run.graph,
      superstep: 0,
      stepCount: 0,
      input: JSON.stringify(run.input ?? null),
      maxSteps: run.maxSteps,
      createdAt: run.now,
      updatedAt: run.now,
    };
    if (run.graphVersion) fields.graphVersion = run.graphVersion;
    if (run.deadlineAt) fields.deadlineAt = run.deadlineAt;
    if (run.tokenBudget) fields.tokenBudget = run.tokenBudget;
    if (run.idempotencyKey) fields.idempotencyKey = run.idempotencyKey;
    if (run.webhookUrl) fields.webhookUrl = run.webhookUrl;
    if (run.batchId) fields.batchId = run.batchId;
    if (run.scheduleId) fields.scheduleId = run.scheduleId;
    if (run.conversationId) fields.conversationId = run.conversationId;
    if (run.priority) fields.priority = run.priority;
    // One round trip. The active index comes first: a crash after it leaves an index entry without a
    // run, which readers skip and the reconciler drops. The run's script touches only the run's shard
    // (its keys and its step queue, one Cluster slot); the indexes are global keys written beside it, by
    // commands of their own (on a Cluster, one pipeline per slot, sent at once).
    const script = await runScriptSha(this.redis, start ? CREATE_RUN_AND_START : CREATE_RUN);
    const pairs = Object.entries(fields).flat();
    const replies = await slotPipeline(this.redis)
      .zadd(this.keys.activeRuns(), 'NX', run.now, run.id)
      .evalsha(
        script,
        start ? 18 : 7,
        ...this.keys.runAll(run.id),
        ...(start
          ? [
              ...start.queueKeys,
              start.queuePrefix,
              start.jobId,
              start.name,
              JSON.stringify(start.data),
              start.attempts,
              run.now,
              run.priority ?? 0,
              ...pairs,
            ]
          : pairs),
      )
      // In the same round trip, so no crash can leave a created run out of its tenant's list. When the id
      // was already taken by another tenant's run, list() skips that foreign entry (it checks meta.tenant).
      .zadd(this.keys.tenantRuns(run.tenant), 'NX', run.now, run.id)
      .sadd(this.keys.tenants(), run.tenant)
      .exec();
    const [, createReply] = replies ?? [];
    if (createReply?.[0] instanceof Error && createReply[0].message.includes('NOSCRIPT') && !retried) {
      // Redis restarted and lost its script cache since we loaded the script.
      forgetScripts(this.redis);
      return this.create(run, start, true);
    }
    if (createReply?.[0]) throw createReply[0];
    // Created: the meta is what was written. Taken: the script returned the existing run's meta.
    if (createReply?.[1] === 1)
      return {
        created: true,
        meta: parseMeta(Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, String(value)]))),
      };
    const existing = pairsToObject((createReply?.[1] as string[] | undefined) ?? []);
    if (!existing.id)
      throw new AgentqError('INTERNAL', `run ${run.id} vanished right after it was created`, { retryable: true });
    return { created: false, meta: parseMeta(existing) };
  }

  /**
   * Initial state, the first tasks and the messages the history starts with (a conversation's earlier
   * turns), in one script; → `admitted`: 'ok', 'admitted' (before), 'missing', or the status it has.
   * `start`: a start job's task, begun in the same script when the run is taken in now (`started`, as BEGIN).
   */
  async admit(
    runId: string,
    graphVersion: string,
    state: Record<string, unknown>,
    tasks: Task[],
    now: number,
    runTrace = '',
    messages: readonly Message[] = [],
    start?: { task: number; data: Record<string, unknown> },
  ): Promise<{ admitted: string; started?: Extract<BeginResult, { kind: 'run' }> }> {
    const pairs = Object.entries(state).flatMap(([key, value]) => [key, JSON.stringify(value)]);
    const reply = await this.script<string | unknown[]>(ADMIT_RUN, runId, [
      now,
      graphVersion,
      JSON.stringify(tasks),
      runTrace,
      start ? start.task : '',
      this.eventsMaxLen,
      start ? JSON.stringify(start.data) : '',
      pairs.length / 2,
      ...pairs,
      messages.length,
      ...messages.map((message) => JSON.stringify(message)),
    ]);
    return typeof reply === 'string' ? { admitted: reply } : { admitted: 'ok', started: parseRun(reply) };
  }

  async get(runId: string): Promise<RunMeta | null> {
    const fields = await this.redis.hgetall(this.keys.run(runId).meta);
    return fields.id ? parseMeta(fields) : null;
  }

  async record(runId: string): Promise<RunRecord | null> {
    return runRecordOf(await this.redis.hgetall(this.keys.run(runId).meta));
  }

  /** BEGIN on its own; `cachedSuperstep`: the caller holds the state at that cursor, so none is sent if it is current. */
  async begin(
    runId: string,
    superstep: number,
    task: number,
    startData: Record<string, unknown>,
    now: number,
    cachedSuperstep?: number,
  ): Promise<BeginResult> {
    const reply = await runScript<unknown[]>(this.stepRedis, BEGIN_STEP, this.keys.runAll(runId), [
      superstep,
      task,
      now,
      this.eventsMaxLen,
      JSON.stringify(startData),
      cachedSuperstep ?? '',
    ]);
    return parseBeginReply(reply);
  }

  /** COMMIT's arguments (run-scripts.ts), also the first arguments of engine v2's transition script. */
  commitArgs(request: CommitRequest, now: number): (string | number)[] {
    const { step, outcome } = request;
    const statePairs: string[] = [];
    if (request.stateJson) for (const key in request.stateJson) statePairs.push(key, request.stateJson[key]!);
    else for (const key in request.state) statePairs.push(key, JSON.stringify(request.state[key]));
    const endData = step ? { node: step.node, superstep: step.superstep, task: step.task, attempt: step.attempts } : {};
    return [
      request.superstep,
      request.task,
      request.mode,
      now,
      this.eventsMaxLen,
      this.retentionSeconds,
      JSON.stringify(step ?? {}),
      JSON.stringify(request.write ?? null),
      request.totalTasks,
      outcome.kind,
      outcome.kind === 'next' ? JSON.stringify(outcome.tasks) : JSON.stringify(outcome.output ?? null),
      JSON.stringify(endData),
      request.usage?.inputTokens ?? 0,
      request.usage?.outputTokens ?? 0,
      request.usage?.costUsd ?? 0,
      request.memos === false ? '0' : '1',
      statePairs.length / 2,
      ...statePairs,
      request.messages.length,
      ...request.messages.map((message) => JSON.stringify(message)),
    ];
  }

  /** COMMIT's reply, parsed; a run it finished gets its finish hooks run (webhooks, metrics, batch slot). */
  async committed(runId: string, reply: string[]): Promise<CommitResult> {
    const kind = reply[0];
    if (kind === 'fenced' || kind === 'missing' || kind === 'deadline') return { kind };
    if (kind === 'stored') return { kind, index: Number(reply[1]), count: Number(reply[2]) };
    if (kind === 'completed' || kind === 'cancelled') await this.finished(runId, kind);
    return { kind: kind as 'advanced' | 'completed' | 'cancelled', index: Number(reply[1]) };
  }

  async commit(request: CommitRequest, now: number): Promise<CommitResult> {
    const reply = await runScript<string[]>(
      this.stepRedis,
      COMMIT_STEP,
      this.keys.runAll(request.runId),
      this.commitArgs(request, now),
    );
    return this.committed(request.runId, reply);
  }

  /** Stored writes of the current superstep's tasks, by task index. */
  async writes(runId: string): Promise<Map<number, TaskWrite>> {
    const fields = await this.redis.hgetall(this.keys.run(runId).writes);
    return new Map(Object.entries(fields).map(([task, value]) => [Number(task), JSON.parse(value) as TaskWrite]));
  }

  /**
   * Fail or cancel a run that has not finished, keeping its last committed context.
   * `superstep` fences the change to a step's own superstep; `onlyFrom` to a status.
   */
  async finish(
    runId: string,
    status: 'failed' | 'cancelled',
    error: ErrorRecord,
    now: number,
    { superstep, onlyFrom }: { superstep?: number; onlyFrom?: RunStatus } = {},
  ): Promise<'ok' | 'missing' | 'terminal' | 'fenced'> {
    const result = await this.script<'ok' | 'missing' | 'terminal' | 'fenced'>(FINISH_RUN, runId, [
      superstep ?? '',
      status,
      JSON.stringify(error),
      now,
      this.eventsMaxLen,
      this.retentionSeconds,
      JSON.stringify({ status, error }),
      onlyFrom ?? '',
    ]);
    if (result === 'ok') await this.finished(runId, status);
    else if (result === 'terminal' || result === 'missing') await this.redis.zrem(this.keys.activeRuns(), runId);
    return result;
  }

  /** → the status after the request ('cancelled' at once when no step was in flight), or 'missing'. */
  async requestCancel(runId: string, now: number): Promise<RunStatus | 'missing'> {
    const result = await this.script<RunStatus | 'missing'>(REQUEST_CANCEL, runId, [
      now,
      this.eventsMaxLen,
      this.retentionSeconds,
      JSON.stringify(CANCELLED_ERROR),
      JSON.stringify({ status: 'cancelled', error: CANCELLED_ERROR }),
    ]);
    if (result === 'cancelled') await this.finished(runId, 'cancelled');
    if (result === 'cancelling') await this.redis.publish(this.keys.cancelChannel(), runId);
    return result;
  }

  async retry(runId: string, now: number): Promise<{ superstep: number; tasks: Task[] }> {
    const meta = await this.get(runId);
    if (meta) await this.redis.zadd(this.keys.activeRuns(), 'NX', meta.createdAt, runId);
    const reply = await this.script<string[]>(RETRY_RUN, runId, [now, this.eventsMaxLen]);
    switch (reply[0]) {
      case 'ok':
        return { superstep: Number(reply[1]), tasks: JSON.parse(reply[2]!) as Task[] };
      case 'missing':
        throw new AgentqError('NOT_FOUND', `run ${runId} not found (it may have expired)`);
      case 'no-tasks':
        await this.redis.zrem(this.keys.activeRuns(), runId);
        throw new AgentqError(
          'CONFLICT',
          `run ${runId} failed before its first step (its input was rejected); enqueue a corrected run instead`,
        );
      default:
        await this.redis.zrem(this.keys.activeRuns(), runId);
        throw new AgentqError('CONFLICT', `run ${runId} is ${reply[1]}; only a failed run can be retried`);
    }
  }

  /** The step asked for input: the run waits. → 'ok' | 'missing' | 'fenced' */
  interrupt(
    runId: string,
    superstep: number,
    interrupt: PendingInterrupt,
    now: number,
  ): Promise<'ok' | 'missing' | 'fenced'> {
    return this.script(INTERRUPT_RUN, runId, [
      superstep,
      now,
      this.eventsMaxLen,
      JSON.stringify(interrupt),
      JSON.stringify({ node: interrupt.node, request: interrupt.request }),
    ]);
  }

  /** Answers a waiting run; → the superstep to hand back to the workers. */
  async resume(runId: string, value: unknown, now: number): Promise<{ superstep: number }> {
    const reply = await this.script<string[]>(RESUME_RUN, runId, [
      now,
      this.eventsMaxLen,
      JSON.stringify(value ?? null),
    ]);
    if (reply[0] === 'ok') return { superstep: Number(reply[1]) };
    if (reply[0] === 'missing') throw new AgentqError('NOT_FOUND', `run ${runId} not found (it may have expired)`);
    throw new AgentqError('CONFLICT', `run ${runId} is ${reply[1]}; only a waiting run can be resumed`);
  }

  /**
   * Deletes a run and its index entries. The run's keys go first, in one command (one slot); the index
   * entries after, each a key of its own: an entry left by a crash in between is skipped by readers.
   */
  async purge(runId: string, tenant: string): Promise<void> {
    await this.redis.del(...this.keys.runAll(runId));
    await slotPipeline(this.redis).zrem(this.keys.tenantRuns(tenant), runId).zrem(this.keys.activeRuns(), runId).exec();
  }

  /** Usage of an attempt that failed after paying for a model call (a committed step carries its own). */
  async addUsage(runId: string, usage: Usage): Promise<void> {
    const key = this.keys.run(runId).meta;
    const pipeline = this.redis
      .pipeline()
      .hincrby(key, 'inputTokens', usage.inputTokens)
      .hincrby(key, 'outputTokens', usage.outputTokens);
    if (usage.costUsd) pipeline.hincrbyfloat(key, 'costUsd', usage.costUsd);
    await pipeline.exec();
  }

  /**
   * Saves a step's memoised paid work (invariant I4), all of it: memos live in one hash field per step,
   * are read by BEGIN when the step starts and deleted when it commits (after which it never runs again).
   * Only the worker running the step writes them, so it writes what it holds.
   */
  async memoPut(runId: string, stepId: string, memos: Record<string, unknown>): Promise<void> {
    await this.redis.hset(this.keys.run(runId).memo, stepId, JSON.stringify(memos));
  }

  async state(runId: string): Promise<Record<string, unknown>> {
    return parseState(await this.redis.hgetall(this.keys.run(runId).state));
  }

  async steps(runId: string): Promise<StepRecord[]> {
    const items = await this.redis.lrange(this.keys.run(runId).steps, 0, -1);
    return items.map((item) => JSON.parse(item) as StepRecord);
  }

  /** The run's history; `from` skips the messages before that index (a summarised history's prompt needs only the rest). */
  async messages(runId: string, from = 0): Promise<Message[]> {
    const items = await this.redis.lrange(this.keys.run(runId).messages, Math.max(0, from), -1);
    return items.map((item) => JSON.parse(item) as Message);
  }

  async addEvent(runId: string, type: RunEventType, data: Record<string, unknown>): Promise<void> {
    await this.redis.xadd(
      this.keys.run(runId).events,
      'MAXLEN',
      '~',
      this.eventsMaxLen,
      '*',
      'type',
      type,
      'data',
      JSON.stringify(data),
    );
  }

  /**
   * Events after `after` (a stream id; '0-0' for all). With `blockMs`, waits that long for new ones —
   * pass a connection of its own for that (a blocked connection serves nobody else).
   */
  async events(
    runId: string,
    { after = '0-0', blockMs, count = 500, connection }: EventReadOptions = {},
  ): Promise<RunEvent[]> {
    const key = this.keys.run(runId).events;
    const redis = connection ?? this.redis;
    const reply =
      blockMs === undefined
        ? await redis.xread('COUNT', count, 'STREAMS', key, after)
        : await redis.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', key, after);
    if (!reply) return [];
    return reply[0]![1].map(([id, fields]) => parseEvent(id, fields));
  }

  /** A tenant's runs, newest first. The cursor is opaque; a full page always carries one. */
  async list(
    tenant: string,
    { status, graph, limit = 50, cursor }: ListFilter = {},
  ): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
    const key = this.keys.tenantRuns(tenant);
    const runs: RunRecord[] = [];
    let [maxScore, afterId] = cursor ? decodeCursor(cursor) : ['+inf', null as string | null];
    const batch = limit * 2 + 10;
    for (let round = 0; round < 20 && runs.length < limit; round += 1) {
      const page = await this.redis.zrevrangebyscore(key, maxScore, '-inf', 'WITHSCORES', 'LIMIT', 0, batch);
      const entries: [string, string][] = [];
      for (let i = 0; i < page.length; i += 2) {
        const id = page[i]!;
        const score = page[i + 1]!;
        // Same-score entries come in descending id order; skip those a previous page returned.
        if (afterId !== null && score === maxScore && id >= afterId) continue;
        entries.push([id, score]);
      }
      if (entries.length === 0) break;
      // The tenant's runs are spread over the shards: their metas are read per slot, all at once.
      const pipeline = slotPipeline(this.redis);
      for (const [id] of entries) pipeline.hgetall(this.keys.run(id).meta);
      const metas = (await pipeline.exec()) ?? [];
      const expired: string[] = [];
      for (let i = 0; i < entries.length && runs.length < limit; i += 1) {
        const [id, score] = entries[i]!;
        [maxScore, afterId] = [score, id];
        const fields = metas[i]?.[1] as Record<string, string> | undefined;
        if (!fields?.id) {
          expired.push(id);
          continue;
        }
        const meta = parseMeta(fields);
        if (meta.tenant !== tenant || (status && meta.status !== status) || (graph && meta.graph !== graph)) continue;
        runs.push(toRunRecord(meta));
      }
      if (expired.length > 0) await this.redis.zrem(key, ...expired);
      if (page.length < batch * 2) break;
    }
    return { runs, nextCursor: runs.length >= limit && afterId !== null ? encodeCursor(maxScore, afterId) : null };
  }

  /**
   * Drops from each tenant's run list the entries whose run has expired (retention) — up to `limit` per
   * tenant, oldest first, among runs created more than the retention period ago (no younger run can have
   * expired). Listing drops expired entries too, but only of the pages it reads. → entries dropped.
   */
  async trimTenantIndexes(now: number, limit = 500): Promise<number> {
    let dropped = 0;
    for (const tenant of await this.redis.smembers(this.keys.tenants())) {
      const key = this.keys.tenantRuns(tenant);
      const candidates = await this.redis.zrangebyscore(
        key,
        '-inf',
        now - this.retentionSeconds * 1000,
        'LIMIT',
        0,
        limit,
      );
      if (candidates.length === 0) continue;
      const pipeline = slotPipeline(this.redis);
      for (const id of candidates) pipeline.exists(this.keys.run(id).meta);
      const exists = (await pipeline.exec()) ?? [];
      const expired = candidates.filter((_id, i) => exists[i]?.[1] === 0);
      if (expired.length > 0) dropped += await this.redis.zrem(key, ...expired);
    }
    return dropped;
  }

  /** Ids of runs not known to be finished, oldest first. */
  activeRunIds(limit = 10_000): Promise<string[]> {
    return this.redis.zrange(this.keys.activeRuns(), '0', String(limit - 1));
  }

  async forgetActive(runId: string): Promise<void> {
    await this.redis.zrem(this.keys.activeRuns(), runId);
  }
}

export interface EventReadOptions {
  after?: string;
  blockMs?: number;
  count?: number;
  connection?: RedisConnection;
}

export { parseMeta, toRunRecord, type RunMeta, type StepMeta };

/** BEGIN's reply (on its own, or inside engine v2's transition and take scripts), parsed. */
export function parseBeginReply(reply: unknown[]): BeginResult {
  const kind = reply[0] as string;
  switch (kind) {
    case 'missing':
      return { kind: 'missing' };
    case 'admit':
      return { kind: 'admit', meta: parseMeta(pairsToObject(reply[2] as string[])) };
    case 'run':
      return parseRun(reply);
    default:
      return { kind: kind as 'skip' | 'stale' | 'written' | 'cancel', status: reply[1] as RunStatus };
  }
}

/** BEGIN's (and a starting ADMIT's) 'run' reply: meta fields as one JSON array, state as one JSON object (nil: cached), memos. */
function parseRun(reply: unknown[]): Extract<BeginResult, { kind: 'run' }> {
  return {
    kind: 'run',
    meta: parseStepMeta(JSON.parse(reply[2] as string) as (string | false)[]),
    state: typeof reply[3] === 'string' ? { base: reply[3], changed: {} } : null,
    memos: typeof reply[4] === 'string' ? (JSON.parse(reply[4]) as Record<string, unknown>) : {},
  };
}
