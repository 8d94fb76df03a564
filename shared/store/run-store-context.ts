import type { Concurrency } from '../contracts/job-schema.js';
import type { RedisConnection } from '../redis/connect-redis.js';
import { runScript } from '../redis/create-redis.js';
import { Keys } from './keys.js';
import type { FinishedRun, RecordingOptions, RunStoreOptions } from './run-store-types.js';
import { slotPipeline } from './slot-pipeline.js';

/** What every role of the run store shares: the connections, the keys, the limits and the finish hook. */
export class RunStoreContext {
  readonly keys: Keys;
  readonly retentionSeconds: number;
  readonly eventsMaxLen: number;
  readonly stepRedis: RedisConnection;
  readonly recording: RecordingOptions;
  private readonly onFinished: RunStoreOptions['onFinished'];

  constructor(
    readonly redis: RedisConnection,
    {
      keyPrefix,
      shards = 1,
      retentionSeconds = 7 * 24 * 3600,
      eventsMaxLen = 1000,
      onFinished,
      stepRedis,
      recording = { mode: 'full', maxBytes: 1024 * 1024 },
    }: RunStoreOptions = {},
  ) {
    this.recording = recording;
    this.stepRedis = stepRedis ?? redis;
    this.keys = new Keys(keyPrefix, shards);
    this.retentionSeconds = retentionSeconds;
    this.eventsMaxLen = eventsMaxLen;
    this.onFinished = onFinished;
  }

  /** Runs the finish hooks; `run`: what they need, when the caller has it (a commit's reply), else read here. */
  async finished(runId: string, status: 'completed' | 'failed' | 'cancelled', run?: FinishedRun): Promise<void> {
    if (run) {
      // The index beside the hooks, not before them: a batch's next question waits for no extra round trip.
      await Promise.all([
        this.redis.zrem(this.keys.activeRuns(), runId),
        this.onFinished?.(runId, status, run).catch(() => undefined),
      ]);
      return;
    }
    // One round trip for the index and for what every hook needs, instead of one per hook (on a Cluster,
    // one per slot, at once: the index is a key of its own).
    const replies = await slotPipeline(this.redis)
      .zrem(this.keys.activeRuns(), runId)
      .hmget(
        this.keys.run(runId).meta,
        'tenant',
        'webhookUrl',
        'batchId',
        'conversationId',
        'graph',
        'graphVersion',
        'concurrency',
      )
      .hstrlen(this.keys.run(runId).meta, 'output')
      .hexists(this.keys.run(runId).meta, 'tasks')
      .exec();
    const [
      tenant = null,
      webhookUrl = null,
      batchId = null,
      conversationId = null,
      graph = null,
      version = null,
      concurrency = null,
    ] = (replies?.[1]?.[1] as (string | null)[] | undefined) ?? [];
    const outputBytes = Number(replies?.[2]?.[1] ?? 0);
    // A version counts only once a worker took the run in with it: one a request named and no worker
    // served would make a metric label of whatever a caller sent.
    const graphVersion = replies?.[3]?.[1] === 1 ? version : null;
    await this.onFinished?.(runId, status, {
      tenant,
      webhookUrl,
      batchId,
      conversationId,
      outputBytes,
      graph,
      graphVersion,
      concurrency: concurrency ? (JSON.parse(concurrency) as Concurrency) : null,
    }).catch(() => undefined);
  }

  script<T>(lua: string, runId: string, args: (string | number)[]): Promise<T> {
    return runScript<T>(this.redis, lua, this.keys.runAll(runId), args);
  }
}
