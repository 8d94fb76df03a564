import type { Config } from '../../shared/config/config.js';

/** The worker process script of the worker-fault scenarios, for `spawnWorker`. */
export const MODEL_STEPS_WORKER = 'test/chaos/workers-killed-worker.ts';

/**
 * The environment of a `workers-killed-worker.ts` process: the test's Redis, prefixes and the stall,
 * reconcile and shutdown settings of `config` (so test and workers agree on them), the scripted model.
 * No ingest threads: two cores are shared by every test.
 */
export function modelStepsWorkerEnv(config: Config, modelUrl: string): Record<string, string> {
  return {
    REDIS_URL: config.redisUrl!,
    AGENTQ_KEY_PREFIX: config.keyPrefix,
    AGENTQ_QUEUE_PREFIX: config.queuePrefix,
    AGENTQ_WORKER_CONCURRENCY: String(config.concurrency),
    AGENTQ_LOCK_DURATION_MS: String(config.lockDurationMs),
    AGENTQ_STALLED_INTERVAL_MS: String(config.stalledIntervalMs),
    AGENTQ_MAX_STALLED_COUNT: String(config.maxStalledCount),
    AGENTQ_RECONCILE_INTERVAL_MS: String(config.reconcileIntervalMs),
    AGENTQ_RECONCILE_AFTER_MS: String(config.reconcileAfterMs),
    AGENTQ_SHUTDOWN_GRACE_MS: String(config.shutdownGraceMs),
    AGENTQ_INGEST_CONCURRENCY: '0',
    AGENTQ_LOG_LEVEL: 'error',
    OPENAI_BASE_URL: modelUrl,
    LLM_MODEL: 'scripted-chat',
  };
}
