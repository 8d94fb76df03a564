import { randomBytes } from 'node:crypto';
import type { GraphRegistry } from '../../shared/graph/graph-registry.js';
import type { ServedGraphs } from '../../shared/store/served-graphs.js';
import type { Logger } from '../../shared/telemetry/logger.js';

export interface ServedGraphsHeartbeat {
  readonly workerId: string;
  /** Stops announcing and withdraws this worker's entries. */
  stop(): Promise<void>;
}

/**
 * Announces the worker's graphs now and every `intervalMs`, so producers know which graphs a live
 * worker serves and a worker that lacks a run's graph knows whether to leave it for another one. The
 * first announcement is awaited: a run enqueued right after `startWorker` resolves is already accepted.
 */
export async function startServedGraphsHeartbeat({
  served,
  registry,
  intervalMs,
  logger,
}: {
  served: ServedGraphs;
  registry: GraphRegistry;
  intervalMs: number;
  logger: Logger;
}): Promise<ServedGraphsHeartbeat> {
  const workerId = `w${randomBytes(6).toString('hex')}`;
  await served.announce(workerId, registry.ids());
  const timer = setInterval(() => {
    served
      .announce(workerId, registry.ids())
      .catch((error: unknown) =>
        logger.warn({ err: String(error) }, 'could not announce the served graphs (will retry)'),
      );
  }, intervalMs);
  timer.unref();
  return {
    workerId,
    async stop() {
      clearInterval(timer);
      // Bounded: with Redis down the withdrawal would wait forever on a worker connection, and the
      // entries expire by themselves after three missed heartbeats anyway.
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([
        served.withdraw(workerId, registry.ids()).catch(() => undefined),
        new Promise<void>((resolve) => {
          timeout = setTimeout(resolve, 1000);
        }),
      ]);
      clearTimeout(timeout);
    },
  };
}
