import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { StepAbort } from '../../shared/contracts/abort.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { StepAbortHandle } from './step-abort.js';

/**
 * The steps this worker is running, by run, so a cancellation published on Redis reaches the running
 * node's AbortSignal at once, and shutdown can release them all.
 */
export class ActiveSteps {
  private readonly byRun = new Map<string, Set<StepAbortHandle>>();
  private subscriber: RedisConnection | undefined;

  add(runId: string, handle: StepAbortHandle): () => void {
    let set = this.byRun.get(runId);
    if (!set) {
      set = new Set();
      this.byRun.set(runId, set);
    }
    set.add(handle);
    return () => {
      set.delete(handle);
      if (set.size === 0) this.byRun.delete(runId);
    };
  }

  get size(): number {
    let count = 0;
    for (const set of this.byRun.values()) count += set.size;
    return count;
  }

  /** Runs with a step running here whose id starts with `prefix` (a batch's runs: `<batchId>.i`), but `except`. */
  runsWith(prefix: string, except?: string): number {
    let count = 0;
    for (const runId of this.byRun.keys()) if (runId !== except && runId.startsWith(prefix)) count += 1;
    return count;
  }

  abortRun(runId: string, reason: StepAbort): void {
    for (const handle of this.byRun.get(runId) ?? []) handle.abort(reason);
  }

  abortAll(reason: StepAbort): void {
    for (const runId of [...this.byRun.keys()]) this.abortRun(runId, reason);
  }

  /** Listens on the cancel channel with a connection of its own (a subscribed connection does nothing else). */
  async listen(subscriber: RedisConnection, channel: string, logger: Logger): Promise<void> {
    this.subscriber = subscriber;
    subscriber.on('message', (_channel: string, runId: string) => {
      if (!this.byRun.has(runId)) return;
      logger.info({ runId }, 'cancelling the running step');
      this.abortRun(runId, new StepAbort('cancel', 'the run was cancelled'));
    });
    await subscriber.subscribe(channel);
  }

  async close(): Promise<void> {
    if (this.subscriber) await this.subscriber.quit().catch(() => undefined);
  }

  /** Drops the cancel channel's connection without waiting (a shutdown past its deadline). */
  disconnect(): void {
    this.subscriber?.disconnect();
  }
}
