import type { Queue, Worker } from 'bullmq';
import type { RedisConnection } from '../shared/redis/connect-redis.js';
import type { McpConnections } from '../shared/adapters/mcp/connect-mcp-servers.js';
import type { BullmqConnection } from '../shared/bullmq/bullmq-connection.js';
import type { Config } from '../shared/config/config.js';
import { StepAbort } from '../shared/contracts/abort.js';
import type { RunFinishedHook } from '../shared/operations/runs/run-finished-hook.js';
import type { Logger } from '../shared/telemetry/logger.js';
import type { Telemetry } from '../shared/telemetry/telemetry.js';
import type { WarningGate } from '../shared/telemetry/warning-gate.js';
import { BoundedShutdown } from '../shared/operations/bounded-shutdown.js';
import type { ActiveSteps } from './engine/active-steps.js';
import type { WorkerLiveness } from './start-worker-liveness.js';
import type { ServedGraphsHeartbeat } from './operations/served-graphs-heartbeat.js';
import type { Reconciler } from './operations/reconciler.js';
import type { WebhookWorker } from './operations/webhooks/start-webhook-worker.js';
import type { IngestWorker } from './ingest/start-ingest-worker.js';

/**
 * What a worker process holds when it is asked to stop (start-worker.ts). A start that failed part-way
 * stops what it had opened: the parts it had not reached yet are missing.
 */
export interface RunningWorkerParts {
  config: Pick<Config, 'shutdownGraceMs' | 'shutdownReleaseMs'>;
  logger: Logger;
  warnings: WarningGate;
  activeSteps: ActiveSteps;
  heartbeat?: ServedGraphsHeartbeat;
  reconciler?: Reconciler;
  jobWorkers: Worker[];
  ingestWorker?: IngestWorker;
  webhookWorker?: WebhookWorker;
  queues: Queue[];
  runFinished?: RunFinishedHook;
  bullmq?: BullmqConnection;
  telemetry?: Telemetry;
  mcp: McpConnections;
  liveness?: WorkerLiveness;
  connections: RedisConnection[];
}

/**
 * Graceful shutdown, bounded: stop taking jobs; let active steps finish within the grace
 * period (AGENTQ_SHUTDOWN_GRACE_MS); then abort the rest, releasing their jobs to other workers without
 * spending an attempt; then close queues and connections. Whatever Redis's state, it ends by the grace
 * plus AGENTQ_SHUTDOWN_RELEASE_MS: what has not been let go of by then is dropped (connections
 * disconnected, the liveness thread ended) and named in the last log line.
 */
export async function stopWorker(parts: RunningWorkerParts): Promise<void> {
  const { config, logger, activeSteps, liveness, connections } = parts;
  const startedAt = Date.now();
  const deadline = startedAt + config.shutdownGraceMs + config.shutdownReleaseMs;
  const shutdown = new BoundedShutdown(deadline, logger);
  const activeAtStart = activeSteps.size;
  logger.info(
    { active: activeAtStart, graceMs: config.shutdownGraceMs, releaseMs: config.shutdownReleaseMs },
    'worker shutting down',
  );
  const grace = setTimeout(
    () => activeSteps.abortAll(new StepAbort('shutdown', 'the worker is shutting down')),
    config.shutdownGraceMs,
  );
  const disconnectWorker = (worker: Worker | Queue) => () => void worker.disconnect().catch(() => undefined);
  const { heartbeat, reconciler, ingestWorker, webhookWorker, runFinished, telemetry } = parts;
  await shutdown.stage([
    // Both bounded by themselves or quick; neither must hold up the steps' release.
    ...(heartbeat ? [{ name: 'served-graphs entry', run: () => heartbeat.stop() }] : []),
    ...(reconciler ? [{ name: 'reconciler', run: () => reconciler.stop() }] : []),
    ...parts.jobWorkers.map((worker) => ({
      name: `${worker.name} worker`,
      run: () => worker.close(),
      force: disconnectWorker(worker),
    })),
    ...(ingestWorker
      ? [{ name: 'ingest worker', run: () => ingestWorker.close(), force: () => ingestWorker.disconnect() }]
      : []),
  ]);
  clearTimeout(grace);
  await shutdown.stage([
    { name: 'cancel channel', run: () => activeSteps.close(), force: () => activeSteps.disconnect() },
    ...parts.queues.map((queue) => ({
      name: `${queue.name} queue`,
      run: () => queue.close(),
      force: disconnectWorker(queue),
    })),
    ...(webhookWorker
      ? [{ name: 'webhook worker', run: () => webhookWorker.close(), force: () => webhookWorker.disconnect() }]
      : []),
    ...(runFinished ? [{ name: 'webhook queue', run: () => runFinished.close() }] : []),
    ...(telemetry ? [{ name: 'trace export', run: () => telemetry.flush() }] : []),
    { name: 'MCP servers', run: () => parts.mcp.close() },
  ]);
  parts.bullmq?.close();
  // The liveness thread last but one: until here this process's claims and locks still show it alive.
  if (liveness) await shutdown.stage([{ name: 'liveness thread', run: () => liveness.close() }]);
  await shutdown.stage(
    connections.map((connection, index) => ({
      name: `Redis connection ${index + 1}`,
      // Down or reconnecting, QUIT would only wait in the offline queue: drop it at once.
      run: () =>
        connection.status === 'ready' ? connection.quit() : Promise.reject(new Error(`Redis ${connection.status}`)),
      force: () => connection.disconnect(),
    })),
  );
  parts.warnings.flush();
  // Steps still active here were aborted but could not be released: their jobs go back by the stall check.
  shutdown.finish('worker', { tookMs: Date.now() - startedAt, activeAtStart, activeLeft: activeSteps.size });
}
