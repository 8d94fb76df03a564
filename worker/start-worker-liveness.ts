import type { Config } from '../shared/config/config.js';
import type { Logger } from '../shared/telemetry/logger.js';
import type { Keys } from '../shared/store/keys.js';
import { INGEST_QUEUE, INTAKE_QUEUE, SCHEDULES_QUEUE, STEP_QUEUE, WEBHOOK_QUEUE } from '../shared/contracts/queues.js';
import { stepQueuePrefix } from '../shared/contracts/shards.js';
import { queueQualifiedName } from '../shared/bullmq/bullmq-keys.js';
import type { RedisConnection } from '../shared/redis/connect-redis.js';
import { startLiveness, type Liveness, type LivenessOptions } from './runtime/liveness-thread.js';
import { watchDataPath } from './runtime/data-path-watch.js';

/** A worker process's liveness, and what start-worker.ts waits for before it takes jobs. */
export interface WorkerLiveness extends Liveness {
  /**
   * Settles once the thread wrote its first beat, or after 5 s (said in the log); rejects with the
   * thread's error when it fails to start.
   */
  readonly firstBeat: Promise<void>;
  /**
   * Beats from this thread through `redis` (Liveness.beatHere) until the thread's first beat, or until
   * `firstBeat` gives up on it: resolves once this process's liveness key exists, written from here or
   * by the thread (or `firstBeat` settles, should neither write land). A job taken before then would
   * hold claims on paid work that look dead to other workers; waiting for the thread's own boot instead
   * cost a start ~0.1 s (more on a loaded machine).
   */
  beatUntilThreadBeats(redis: RedisConnection): Promise<void>;
  /** Watches `dataConnections` (those the steps commit through): while they fail, the thread stops beating. */
  watch(dataConnections: RedisConnection[]): void;
}

/**
 * A worker process's liveness, beating from a thread of its own: it holds the step jobs' locks and
 * releases a dead peer's, while the data connections given to `watch` answer: when they have not for
 * AGENTQ_STEP_REDIS_TIMEOUT_MS, it stops beating until they do. Returns at once, so that the thread (a
 * Node isolate of its own, loading its Redis client and connecting) boots while the worker connects
 * and opens its queues; the worker beats from its own thread until then (`beatUntilThreadBeats`).
 */
export function startWorkerLiveness(
  config: Config,
  keys: Keys,
  logger: Logger,
  { threadModule }: Pick<LivenessOptions, 'threadModule'> = {},
): WorkerLiveness {
  const stepQueueKeys = Array.from({ length: config.shards }, (_value, shard) =>
    queueQualifiedName(stepQueuePrefix(config.queuePrefix, shard, config.shards), STEP_QUEUE),
  );
  const liveness = startLiveness({
    redis: config,
    alivePrefixes: Array.from({ length: config.shards }, (_value, shard) => keys.alivePrefix(shard)),
    intervalMs: config.livenessIntervalMs,
    ttlMs: config.livenessTtlMs,
    lockMs: config.lockDurationMs,
    registryKey: keys.livenessRegistry(),
    // Every queue of agentq, whether this process takes from it or not: a dead peer may have.
    reapQueues: [
      ...stepQueueKeys,
      ...[INTAKE_QUEUE, SCHEDULES_QUEUE, WEBHOOK_QUEUE, INGEST_QUEUE].map((name) =>
        queueQualifiedName(config.queuePrefix, name),
      ),
    ],
    heldQueues: stepQueueKeys,
    // Their workers' stall settings (start-job-workers.ts, start-ingest-worker.ts): a dead peer's jobs are
    // back in wait as soon as it is found dead. The webhook worker keeps BullMQ's own and its check.
    stalledCheck: {
      queues: [
        ...stepQueueKeys,
        ...[INTAKE_QUEUE, SCHEDULES_QUEUE, INGEST_QUEUE].map((name) => queueQualifiedName(config.queuePrefix, name)),
      ],
      maxStalledCount: config.maxStalledCount,
      intervalMs: config.stalledIntervalMs,
    },
    onReaped: (processId, released) =>
      logger.info({ processId, released }, 'a worker process stopped beating: its job locks are released'),
    onLost: (released) =>
      logger.info({ released }, 'reconnected to Redis: released the step jobs taken as the connection dropped'),
    ...(threadModule ? { threadModule } : {}),
  });
  let watching: { stop(): void } | undefined;
  // The beats from this thread: they stop once the thread beats (or is given up on), or the worker closes.
  const bridge = { timer: undefined as NodeJS.Timeout | undefined, writing: Promise.resolve(), withdrawn: false };
  const stopBridge = () => {
    clearInterval(bridge.timer);
    bridge.timer = undefined;
    return bridge.writing;
  };
  // Redis answered the checks before; a thread that still cannot write within 5 s is said, not waited for
  // (this process's claims then look dead to others, which is how a worker without liveness behaved).
  const firstBeat = Promise.race([
    liveness.ready.then(() => true),
    new Promise<false>((resolve) => setTimeout(() => resolve(false), 5000).unref()),
  ]).then((beating) => {
    if (!beating)
      logger.warn(
        'liveness thread has not written its first beat within 5 s; claims on paid work by this worker may be taken over',
      );
  });
  // Handled here, thrown where awaited: a thread that fails while the worker is still opening its queues (a
  // missing module, on a loaded machine long before the await) must fail the start with its own error, not
  // crash the process as an unhandled rejection.
  firstBeat.catch(() => undefined);
  let threadBeating = false;
  // A thread that fails to start rejects `ready`: that error is the start's, thrown where firstBeat is awaited.
  liveness.ready.then(
    () => (threadBeating = true),
    () => undefined,
  );
  return {
    ...liveness,
    firstBeat,
    beatUntilThreadBeats(redis) {
      if (threadBeating) return Promise.resolve();
      const beatHere = () => {
        // While the data connections fail, this process vouches for nothing (as the thread withdraws).
        if (bridge.withdrawn) return bridge.writing;
        bridge.writing = liveness.beatHere(redis).catch(() => undefined);
        return bridge.writing;
      };
      const written = liveness.beatHere(redis);
      bridge.writing = written.catch(() => undefined);
      bridge.timer = setInterval(() => void beatHere(), config.livenessIntervalMs);
      bridge.timer.unref();
      // The thread beating, or given up on after 5 s: from then on only the thread beats, so a process whose
      // thread never came up stops being alive once its key lapses (AGENTQ_LIVENESS_TTL_MS).
      void firstBeat.then(stopBridge, stopBridge);
      // A write refused here (Redis full refuses SET): the thread's first beat is what is waited for.
      return Promise.race([written.catch(() => firstBeat), firstBeat]);
    },
    watch(dataConnections) {
      watching = watchDataPath({
        connections: dataConnections,
        intervalMs: config.livenessIntervalMs,
        failingAfterMs: config.stepRedisTimeoutMs,
        onChange(failing, failedForMs) {
          bridge.withdrawn = failing;
          liveness.dataPathFailing(failing);
          if (failing)
            logger.warn(
              { failedForMs },
              'Redis has not answered on this worker’s data connections: it stops beating, so its peers take its steps over',
            );
          else logger.info({ failedForMs }, 'Redis answers on this worker’s data connections again: it beats again');
        },
      });
    },
    close: async () => {
      watching?.stop();
      // A beat from here landing after the thread deleted the keys would keep a closed process alive.
      await stopBridge();
      return liveness.close();
    },
  };
}
