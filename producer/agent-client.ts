import { Queue } from 'bullmq';
import { connectRedis, describeRedisTarget, type RedisConnection } from '../shared/redis/connect-redis.js';
import { bullmqConnection, type BullmqConnection } from '../shared/redis/bullmq-connection.js';
import { loadConfig, type Config } from '../shared/config.js';
import { AgentqError } from '../shared/errors.js';
import { stepJobId, type StoredRunJob } from '../shared/job-schema.js';
import { INTAKE_QUEUE, queueStreamOptions } from '../shared/queues.js';
import { StepQueues } from '../shared/step-queues.js';
import { RedisRunStore, type ListFilter } from '../shared/redis/redis-run-store.js';
import { enqueueRequestSchema, INTAKE_JOB_OPTIONS, parseEnqueueRequest, RunEnqueuer, type EnqueueRequest } from '../shared/run-enqueuer.js';
import { BatchDispatcher } from '../shared/batches/batch-dispatcher.js';
import type { BatchRecord, BatchRequest, BatchResult } from '../shared/batches/batch-schema.js';
import { withPartialOutput } from '../shared/partial-output.js';
import { isTerminal, type Message, type RunEvent, type RunRecord, type StepRecord } from '../shared/run-record.js';
// The same hook as the workers' (a queued run cancelled here finishes here): metrics, in-flight cap, webhook job.
import { createRunFinishedHook, type RunFinishedHook } from '../shared/run-finished-hook.js';
import { followRun, type RunStreamEvent } from '../shared/streaming/follow-run.js';
import { TokenHub } from '../shared/streaming/token-hub.js';
import { ServedGraphs } from '../shared/graph/served-graphs.js';

export { enqueueRequestSchema, type EnqueueRequest };

/** Batch Q&A: one run per question (see `BatchDispatcher`). */
export interface BatchesApi {
  submit(request: BatchRequest, options?: { idempotencyKey?: string; tenant?: string }): Promise<{ batch: BatchRecord; created: boolean }>;
  get(batchId: string): Promise<BatchRecord | null>;
  results(batchId: string): Promise<BatchResult[] | null>;
  cancel(batchId: string): Promise<BatchRecord | null>;
}

export interface EnqueueOptions {
  /**
   * Queue the run even when live workers exist and none serves its graph; it then waits up to
   * AGENTQ_UNSERVED_GRAPH_WAIT_MS for one before it fails with UNKNOWN_GRAPH. @default false (refused at once)
   */
  queueUnserved?: boolean;
}

export interface AgentClientOptions {
  /** @default loadConfig() (the environment) */
  config?: Config;
  /** Tenant for enqueue and list when a request names none. @default config.tenant */
  tenant?: string;
}

/**
 * The producer side of agentq, for services that can reach Redis: enqueue runs, read them, wait for
 * them, cancel and retry them, follow their events. Fails fast when Redis is down (no offline queue,
 * a command timeout) instead of hanging.
 *
 * Reads by run id are not tenant-scoped: this client is for trusted backends; the HTTP API scopes by
 * the caller's key.
 */
export class AgentClient {
  readonly store: RedisRunStore;
  private readonly config: Config;
  private readonly tenant: string;
  private readonly redis: RedisConnection;
  private readonly intakeQueue: Queue;
  private readonly stepQueues: StepQueues;
  private readonly bullmq: BullmqConnection;
  private readonly readers = new Set<RedisConnection>();
  private tokens: TokenHub | undefined;
  private readonly runFinished: RunFinishedHook;
  private readonly enqueuer: RunEnqueuer;
  private readonly served: ServedGraphs;
  private readyWait: Promise<void> | undefined;
  /** Batch Q&A through the queue. */
  readonly batches: BatchesApi;

  constructor(options: AgentClientOptions = {}) {
    this.config = options.config ?? loadConfig();
    this.tenant = options.tenant ?? this.config.tenant;
    this.redis = connectRedis(this.config, 'producer', this.config.redisCommandTimeoutMs);
    this.redis.on('error', () => undefined); // surfaced per command instead
    this.runFinished = createRunFinishedHook({ redis: this.redis, config: this.config });
    this.store = new RedisRunStore(this.redis, {
      keyPrefix: this.config.keyPrefix,
      shards: this.config.shards,
      retentionSeconds: this.config.retentionSeconds,
      eventsMaxLen: this.config.eventsMaxLen,
      onFinished: this.runFinished,
    });
    this.bullmq = bullmqConnection(this.config, 'producer', this.config.redisCommandTimeoutMs);
    const connection = this.bullmq.connection;
    const streams = queueStreamOptions(this.config.queueEventsMaxLen);
    this.intakeQueue = new Queue(INTAKE_QUEUE, { connection, prefix: this.config.queuePrefix, ...streams });
    this.intakeQueue.on('error', () => undefined);
    this.stepQueues = new StepQueues(this.config.shards, this.config.queuePrefix, { connection, ...streams });
    this.enqueuer = new RunEnqueuer(this.store, this.stepQueues, this.config);
    this.served = new ServedGraphs({ redis: this.redis, keys: this.store.keys, heartbeatMs: this.config.graphHeartbeatMs });
    const dispatcher = new BatchDispatcher({
      redis: this.redis,
      keys: this.store.keys,
      store: this.store,
      enqueuer: this.enqueuer,
      retentionSeconds: this.config.retentionSeconds,
    });
    this.batches = {
      submit: async (request, { idempotencyKey, tenant = this.tenant } = {}) => {
        await this.ready();
        return dispatcher.submit(request, { tenant, ...(idempotencyKey ? { idempotencyKey } : {}) });
      },
      get: async (batchId) => {
        await this.ready();
        return dispatcher.get(batchId);
      },
      results: async (batchId) => {
        await this.ready();
        return dispatcher.results(batchId);
      },
      cancel: async (batchId) => {
        await this.ready();
        return dispatcher.cancel(batchId, (runId) => this.cancel(runId));
      },
    };
  }

  /**
   * Creates the run (status `queued`) and hands it to the workers. The same idempotency key (per tenant)
   * returns the same run and adds nothing twice.
   */
  async enqueue(request: EnqueueRequest, { queueUnserved = false }: EnqueueOptions = {}): Promise<RunRecord> {
    // Validate before touching Redis, so a bad request is an error even when Redis is down.
    const valid = parseEnqueueRequest(request);
    await this.ready();
    // A graph that live workers exist for but none serves would only wait, then fail: say so now.
    if (!queueUnserved) await this.served.requireServed(valid.graph, valid.graphVersion);
    return (await this.enqueuer.enqueueValid({ tenant: this.tenant, ...valid })).record;
  }

  /** Waits until Redis answers (the queues connect lazily), failing fast if it does not. */
  private async ready(): Promise<void> {
    if (this.redis.status === 'ready') return;
    // One wait shared by every call made meanwhile: a listener each would pile up while Redis is down.
    this.readyWait ??= new Promise<void>((resolve, reject) => {
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady);
        reject(new AgentqError('UNAVAILABLE', `${describeRedisTarget(this.config)} is not reachable: start redis-server or set REDIS_URL (REDIS_CLUSTER_NODES for a cluster)`, { retryable: true }));
      }, this.config.redisCommandTimeoutMs + 1000);
      this.redis.once('ready', onReady);
    }).finally(() => (this.readyWait = undefined));
    await this.readyWait;
  }

  /** The run record; a cancelled run's carries its last committed state as `output.partial`. */
  async get(runId: string): Promise<RunRecord | null> {
    await this.ready();
    const record = await this.store.record(runId);
    return record && withPartialOutput(record, (id) => this.store.state(id));
  }

  private async require(runId: string): Promise<RunRecord> {
    const record = await this.get(runId);
    if (!record) throw new AgentqError('NOT_FOUND', `run ${runId} not found (it may never have existed, or it expired or was purged)`);
    return record;
  }

  async steps(runId: string): Promise<StepRecord[]> {
    await this.require(runId);
    return this.store.steps(runId);
  }

  async messages(runId: string): Promise<Message[]> {
    await this.require(runId);
    return this.store.messages(runId);
  }

  async list(filter: ListFilter & { tenant?: string } = {}): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
    await this.ready();
    return this.store.list(filter.tenant ?? this.tenant, filter);
  }

  /** Resolves with the run once it is finished (or waiting for input), or rejects after `timeoutMs`. */
  async wait(runId: string, { timeoutMs = 10 * 60_000 }: { timeoutMs?: number } = {}): Promise<RunRecord> {
    const deadline = Date.now() + timeoutMs;
    let after = '0-0';
    const reader = this.reader();
    try {
      for (;;) {
        const record = await this.require(runId);
        if (isTerminal(record.status) || record.status === 'waiting') return record;
        const left = deadline - Date.now();
        if (left <= 0) throw new AgentqError('TIMEOUT', `run ${runId} is still ${record.status} after ${timeoutMs} ms`, { retryable: true });
        const events = await this.store.events(runId, { after, blockMs: Math.min(left, 1000), connection: reader });
        if (events.length > 0) after = events.at(-1)!.id;
      }
    } finally {
      this.release(reader);
    }
  }

  /**
   * Cancels a run. One with no step in flight is cancelled at once; a running one is cancelled at its
   * step boundary (the running node's AbortSignal fires). Returns the record after the request.
   */
  async cancel(runId: string): Promise<RunRecord> {
    await this.require(runId);
    const status = await this.store.requestCancel(runId, Date.now());
    if (status === 'cancelling') await this.cancelIdleSteps(runId);
    return this.require(runId);
  }

  /** A running run whose next step waits in the queue (or in a retry delay) has no node to abort: end it here. */
  private async cancelIdleSteps(runId: string): Promise<void> {
    const meta = await this.store.get(runId);
    if (!meta?.tasks || meta.status !== 'cancelling') return;
    for (let task = 0; task < meta.tasks.length; task += 1) {
      const job = await this.stepQueues.forRun(runId).getJob(stepJobId(runId, meta.superstep, task));
      if (!job) continue;
      const state = await job.getState();
      if (state === 'active') return; // the worker running it ends the run
      if (state === 'waiting' || state === 'delayed' || state === 'prioritized') {
        // remove() refuses a job a worker has just locked; that worker then ends the run.
        if (!(await job.remove().then(() => true, () => false))) return;
      }
    }
    await this.store.finish(runId, 'cancelled', { code: 'CANCELLED', message: 'the run was cancelled on request', retryable: false }, Date.now(), {
      onlyFrom: 'cancelling',
      superstep: meta.superstep,
    });
  }

  /** Retries a failed run from its last commit (the failed step runs again, with fresh attempts). */
  async retry(runId: string): Promise<RunRecord> {
    await this.require(runId);
    const { superstep } = await this.store.retry(runId, Date.now());
    const job: StoredRunJob = { v: 1, stored: true, runId };
    // A fresh job id: the run's first intake job may still be kept as completed or failed.
    await this.intakeQueue.add('retry', job, { ...INTAKE_JOB_OPTIONS, jobId: `${runId}.retry.s${superstep}.${Date.now()}` });
    return this.require(runId);
  }

  /** Answers a run waiting on an interrupt: the step that asked runs again and receives `value`. */
  async resume(runId: string, value: unknown): Promise<RunRecord> {
    await this.require(runId);
    const { superstep } = await this.store.resume(runId, value, Date.now());
    const job: StoredRunJob = { v: 1, stored: true, runId };
    await this.intakeQueue.add('resume', job, { ...INTAKE_JOB_OPTIONS, jobId: `${runId}.resume.s${superstep}.${Date.now()}` });
    return this.require(runId);
  }

  /** Deletes a finished run now instead of at the end of its retention. */
  async purge(runId: string): Promise<void> {
    const record = await this.require(runId);
    if (!isTerminal(record.status)) throw new AgentqError('CONFLICT', `run ${runId} is ${record.status}; cancel it before purging`);
    await this.store.purge(runId, record.tenant);
  }

  /** The run's events from the start (or after `after`), ending after `run-end`. */
  async *events(runId: string, { after = '0-0' }: { after?: string } = {}): AsyncGenerator<RunEvent> {
    const reader = this.reader();
    try {
      let cursor = after;
      for (;;) {
        const events = await this.store.events(runId, { after: cursor, blockMs: 1000, connection: reader });
        for (const event of events) {
          cursor = event.id;
          yield event;
          if (event.type === 'run-end') return;
        }
        if (events.length === 0) {
          const record = await this.store.record(runId);
          if (!record) return;
          if (isTerminal(record.status)) {
            // run-end may have been trimmed away or already read; drain what is left and stop.
            const rest = await this.store.events(runId, { after: cursor });
            for (const event of rest) yield event;
            return;
          }
        }
      }
    } finally {
      this.release(reader);
    }
  }

  /**
   * Follows a run live: its committed events (as `events()`) and the model's text as it streams
   * (`token` / `token-reset` events, not stored), ending after `run-end`.
   * `for await (const event of client.stream(runId))`.
   */
  stream(runId: string, { after = '0-0' }: { after?: string } = {}): AsyncGenerator<RunStreamEvent> {
    this.tokens ??= new TokenHub(this.store.keys, () => connectRedis(this.config, 'subscriber'));
    const reader = this.reader();
    return followRun({ store: this.store, reader, tokens: this.tokens, runId, after, release: () => this.release(reader) });
  }

  private reader(): RedisConnection {
    const reader = connectRedis(this.config, 'blocking');
    reader.on('error', () => undefined);
    this.readers.add(reader);
    return reader;
  }

  private release(reader: RedisConnection): void {
    this.readers.delete(reader);
    reader.disconnect();
  }

  async close(): Promise<void> {
    this.tokens?.close();
    for (const reader of this.readers) reader.disconnect();
    await Promise.all([this.intakeQueue.close(), this.stepQueues.close(), this.runFinished.close()]);
    this.bullmq.close();
    // quit() needs a ready connection (there is no offline queue); a connection still connecting is dropped.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}
