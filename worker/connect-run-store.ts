import type { Config } from '../shared/config/config.js';
import type { Logger } from '../shared/telemetry/logger.js';
import type { Telemetry } from '../shared/telemetry/telemetry.js';
import { connectRedis, type RedisConnection } from '../shared/redis/connect-redis.js';
import { RedisRunStore, type FinishedRun } from '../shared/store/redis-run-store.js';
import { createRunFinishedHook, type RunFinishedHook } from '../shared/operations/runs/run-finished-hook.js';
import { checkStepLayout } from './engine/check-step-layout.js';
import { checkRedisDurability } from './operations/check-redis-durability.js';
import type { StartWorkerOptions } from './agent-worker.js';

/** A hook that runs after a run reached a terminal state, whichever way it got there. */
export type FinishedHook = (
  runId: string,
  status: 'completed' | 'failed' | 'cancelled',
  run: FinishedRun,
) => Promise<void>;

export interface ConnectedRunStore {
  redis: RedisConnection;
  /** A step's BEGIN and COMMIT, and the step queue (RunStoreOptions.stepRedis). */
  stepRedis: RedisConnection;
  store: RedisRunStore;
  /** Every hook runs when a run finishes; the caller may add more. */
  finishedHooks: FinishedHook[];
  runFinished: RunFinishedHook;
}

/**
 * A worker's two Redis connections, checked (durability, step layout), and its run store with the
 * run-finished hooks every worker has: the observers', metrics and webhook job, and the run's trace span.
 */
export async function connectRunStore(
  options: StartWorkerOptions,
  config: Config,
  logger: Logger,
  telemetry: Telemetry,
): Promise<ConnectedRunStore> {
  const redis = connectRedis(config, 'worker');
  // The step path's commands time out (AGENTQ_STEP_REDIS_TIMEOUT_MS): a silent connection parks steps.
  const stepRedis = connectRedis(config, 'step', config.stepRedisTimeoutMs);
  await Promise.all([checkRedisDurability(redis, config, logger), checkStepLayout(redis, config)]).catch(
    (error: unknown) => {
      redis.disconnect();
      stepRedis.disconnect();
      throw error;
    },
  );
  const finishedHooks: FinishedHook[] = [];
  const store = new RedisRunStore(redis, {
    keyPrefix: config.keyPrefix,
    shards: config.shards,
    retentionSeconds: config.retentionSeconds,
    eventsMaxLen: config.eventsMaxLen,
    tokenLog: { maxLen: config.tokenLogMaxLen, ttlMs: config.tokenLogTtlMs },
    recording: { mode: config.recording, maxBytes: config.recordingMaxBytes },
    stepRedis,
    onFinished: async (runId, status, run) => {
      // Independent of each other (metrics, webhook, batch slot, trace, observers): all at once, so the
      // batch's next question does not wait behind the others' round trips.
      await Promise.all(
        finishedHooks.map((hook) =>
          hook(runId, status, run).catch((error: unknown) =>
            logger.warn({ runId, err: String(error) }, 'run-finished hook failed'),
          ),
        ),
      );
    },
  });
  for (const observer of options.observers ?? []) {
    if (observer.onRunFinished) finishedHooks.push(async (runId, status) => observer.onRunFinished?.(runId, status));
  }
  const runFinished = createRunFinishedHook({ redis, config, logger, store }); // metrics, in-flight cap, webhook job
  finishedHooks.push(runFinished);
  if (telemetry.enabled) {
    finishedHooks.push(async (runId) => {
      const meta = await store.reads.get(runId);
      if (!meta) return;
      telemetry.emitRunSpan({
        trace: meta.trace,
        runId,
        graph: meta.graph,
        graphVersion: meta.graphVersion,
        status: meta.status,
        stepCount: meta.stepCount,
        errorCode: meta.error?.code,
        errorMessage: meta.error?.message,
        startTime: meta.createdAt,
        endTime: meta.updatedAt,
        parent: meta.parent,
      });
    });
  }
  return { redis, stepRedis, store, finishedHooks, runFinished };
}
