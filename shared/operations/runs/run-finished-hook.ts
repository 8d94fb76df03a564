import { Queue } from 'bullmq';
import type { RedisConnection } from '../../redis/connect-redis.js';
import type { Config } from '../../config/config.js';
import { Keys } from '../../store/keys.js';
import type { FinishedRun } from '../../store/redis-run-store.js';
import type { Logger } from '../../telemetry/logger.js';
import { RedisMetrics } from '../metrics/redis-metrics.js';
import { StorageBudget } from '../limits/storage-budget.js';
import { INTAKE_QUEUE, queueStreamOptions, WEBHOOK_QUEUE } from '../../contracts/queues.js';
import type { StoredRunJob } from '../../contracts/job-schema.js';
import { isChildRunId } from '../../contracts/ids.js';
import { ConversationTurns } from '../../store/conversation-turns.js';
import { ConcurrencyKeys } from '../../store/slots/concurrency-keys.js';
import { TenantInflight } from '../limits/tenant-inflight.js';
import { RunStoreContext } from '../../store/run-store-context.js';
import { SharedHistory } from '../../store/shared-history.js';
import { INTAKE_JOB_OPTIONS } from './run-enqueuer.js';
import { webhookJobId, type WebhookJobData } from '../../contracts/webhook-job.js';
import { ChildLinks } from '../../store/child-links.js';
import { RedisRunStore } from '../../store/redis-run-store.js';
import { StepQueues } from '../../store/step-queues.js';
import { ChildRunEnds } from './child-run-ends.js';

type FinishedStatus = 'completed' | 'failed' | 'cancelled';

/** The `onFinished` option of RedisRunStore, with a `close()` for the queue it adds to. */
export interface RunFinishedHook {
  (runId: string, status: FinishedStatus, run: FinishedRun): Promise<void>;
  close(): Promise<void>;
}

export interface RunFinishedHookOptions {
  /**
   * The run store's own connection: the hook reads the run's meta and adds the webhook job through it,
   * so it fails fast on a producer's connection and waits out outages on a worker's.
   */
  redis: RedisConnection;
  config: Pick<
    Config,
    | 'keyPrefix'
    | 'queuePrefix'
    | 'webhookMaxAttempts'
    | 'webhookBackoffMs'
    | 'keepCompletedJobs'
    | 'keepFailedJobs'
    | 'queueEventsMaxLen'
    | 'retentionSeconds'
    | 'shards'
    | 'eventsMaxLen'
  >;
  /**
   * The store whose runs end here, to cancel a cancelled parent's children with (through its hooks).
   * @default one of the hook's own, on `redis`, with this hook alone
   */
  store?: RedisRunStore;
  /** Where the hook's own failures are logged. @default none (dropped) */
  logger?: Logger;
}

/**
 * Builds the run store's `onFinished` hook: after a run reaches completed, failed or cancelled it counts
 * the run in the shared metrics, releases the run's slot in its tenant's in-flight set (the admission's
 * cap) and its place in the tenant's load (FairShare), settles an older run's input charge in the tenant's
 * storage budget (gone when its retention ends), hands its conversation to the next turn
 * waiting behind it (ConversationTurns) and its concurrency key's slot to the next run waiting (ConcurrencyKeys), keeps the earlier turns its history refers to as long as it (SharedHistory), counts a child run's end in its parent and wakes the parent's waiting step after its last child, cancels a cancelled parent's awaited children (ChildRunEnds) and, when the run named a `webhookUrl`, adds a delivery job `<runId>.webhook` to `agentq-webhooks`.
 */
export function createRunFinishedHook({ redis, config, logger, store }: RunFinishedHookOptions): RunFinishedHook {
  const keys = new Keys(config.keyPrefix);
  const metrics = new RedisMetrics(redis, config.keyPrefix);
  // Only settle() is used here: the budget's limit is the admission's business.
  const storage = new StorageBudget(redis, keys, { defaultMaxBytes: 0, retentionSeconds: config.retentionSeconds });
  let queue: Queue<WebhookJobData> | undefined;
  const turns = new ConversationTurns(redis, keys, config.retentionSeconds * 2);
  const concurrencyKeys = new ConcurrencyKeys(redis, keys, config.retentionSeconds * 2);
  // Released whatever the cap of this process (a slot taken under another setting goes back too).
  const inflight = new TenantInflight(redis, keys, Number.MAX_SAFE_INTEGER);
  const history = new SharedHistory(
    new RunStoreContext(redis, {
      keyPrefix: config.keyPrefix,
      shards: config.shards,
      retentionSeconds: config.retentionSeconds,
    }),
  );
  let intake: Queue<StoredRunJob> | undefined;
  let family: { ends: ChildRunEnds; queues: StepQueues } | undefined;
  /** Child runs' ends (wake the parent) and a cancelled parent's children: made when first needed. */
  const familyOf = (): ChildRunEnds => {
    if (!family) {
      const runs =
        store ??
        new RedisRunStore(redis, {
          keyPrefix: config.keyPrefix,
          shards: config.shards,
          retentionSeconds: config.retentionSeconds,
          eventsMaxLen: config.eventsMaxLen,
          onFinished: hook,
        });
      const queues = new StepQueues(config.shards, config.queuePrefix, { connection: redis });
      family = {
        queues,
        ends: new ChildRunEnds({
          store: runs,
          links: new ChildLinks(redis, keys),
          stepQueues: queues,
          ...(logger ? { logger } : {}),
        }),
      };
    }
    return family.ends;
  };

  /** A queue on the store's connection, made when first needed (most processes never add to it). */
  const openQueue = <Data>(name: string, what: string): Queue<Data> => {
    const opened = new Queue<Data>(name, {
      connection: redis,
      prefix: config.queuePrefix,
      ...queueStreamOptions(config.queueEventsMaxLen),
    });
    // Without a listener BullMQ prints connection errors raw on stderr, outside the JSON logs.
    opened.on('error', (error) => logger?.warn({ err: error.message }, `${what} queue connection error (will retry)`));
    return opened;
  };

  /**
   * The run's keyed slots (KeyedSlots) — its conversation's turn, its concurrency key's slot — go to the
   * runs waiting for them, each sent to the intake to be taken in.
   */
  const handOn = async (runId: string, leaving: Promise<string | null>): Promise<void> => {
    const next = await leaving;
    if (!next) return;
    intake ??= openQueue<StoredRunJob>(INTAKE_QUEUE, 'intake');
    // An id of its own per hand-on: an intake job of the same run still finishing (one that found it
    // waiting a moment ago) must not swallow this one.
    await intake.add(
      'run',
      { v: 1, stored: true, runId: next },
      { jobId: `${next}.after.${runId}`, ...INTAKE_JOB_OPTIONS },
    );
  };

  const addDelivery = async (runId: string, status: FinishedStatus): Promise<void> => {
    queue ??= openQueue<WebhookJobData>(WEBHOOK_QUEUE, 'webhook');
    const jobId = webhookJobId(runId);
    const existing = await queue.getJob(jobId);
    if (existing) {
      const state = await existing.getState();
      // A delivery still pending sends the record as it is when it runs; one already done belongs to an
      // earlier end of the run (before a retry or resume) and makes way for this one.
      if (state !== 'completed' && state !== 'failed') return;
      await existing.remove();
    }
    await queue.add(
      'deliver',
      { runId, status },
      {
        jobId,
        attempts: config.webhookMaxAttempts,
        backoff: { type: 'exponential', delay: config.webhookBackoffMs },
        removeOnComplete: { count: config.keepCompletedJobs },
        removeOnFail: { count: config.keepFailedJobs },
      },
    );
  };

  const hook = async (
    runId: string,
    status: FinishedStatus,
    { tenant, webhookUrl, conversationId, graph, graphVersion, concurrency }: FinishedRun,
  ): Promise<void> => {
    try {
      await Promise.all([
        metrics.runFinished(status, graph && graphVersion ? { graph, graphVersion } : undefined),
        tenant ? inflight.release(tenant, runId) : undefined,
        tenant ? redis.zrem(keys.tenantLoad(tenant), runId) : undefined,
        // The run's scripts charged its bytes and set when they leave; a run admitted before they did
        // was charged its input here, and that charge leaves with its retention too.
        tenant ? storage.settle(tenant, runId, 0) : undefined,
        tenant && conversationId ? handOn(runId, turns.leave(tenant, conversationId, runId)) : undefined,
        tenant && concurrency ? handOn(runId, concurrencyKeys.leave(tenant, concurrency, runId)) : undefined,
        // A turn whose history starts in earlier turns keeps them as long as it is kept itself.
        conversationId ? history.keepEarlier(runId) : undefined,
        isChildRunId(runId) || status === 'cancelled' ? familyOf().onFinished(runId, status) : undefined,
      ]);
      if (webhookUrl) await addDelivery(runId, status);
    } catch (error) {
      // Logged, not thrown: the store would drop it anyway, and the transition stands.
      logger?.warn(
        { runId, status, err: (error as Error).message },
        'run-finished hook failed (metrics, in-flight slot or webhook job)',
      );
    }
  };
  return Object.assign(hook, {
    async close() {
      await Promise.all([queue?.close(), intake?.close(), family?.queues.close()]);
    },
  });
}
