import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { StepAbort } from '../../shared/contracts/abort.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { StepAbortHandle } from './step-abort.js';

/**
 * The steps this worker is running, by run, so a cancellation published on Redis reaches the running
 * node's AbortSignal at once, and shutdown can release them all.
 */
export class ActiveSteps {
  /** A run's one running step's handle (the usual case: no Set per step), or a Set when it has several (parallel tasks). */
  private readonly byRun = new Map<string, StepAbortHandle | Set<StepAbortHandle>>();
  private subscriber: RedisConnection | undefined;

  add(runId: string, handle: StepAbortHandle): () => void {
    const held = this.byRun.get(runId);
    if (held === undefined) this.byRun.set(runId, handle);
    else if (held instanceof Set) held.add(handle);
    else this.byRun.set(runId, new Set([held, handle]));
    return () => this.remove(runId, handle);
  }

  private remove(runId: string, handle: StepAbortHandle): void {
    const held = this.byRun.get(runId);
    if (held === handle) this.byRun.delete(runId);
    else if (held instanceof Set) {
      held.delete(handle);
      if (held.size === 0) this.byRun.delete(runId);
    }
  }

  get size(): number {
    let count = 0;
    for (const held of this.byRun.values()) count += held instanceof Set ? held.size : 1;
    return count;
  }

  /** Runs with a step running here whose id starts with `prefix` (a batch's runs: `<batchId>.i`), but `except`. */
  runsWith(prefix: string, except?: string): number {
    let count = 0;
    for (const runId of this.byRun.keys()) if (runId !== except && runId.startsWith(prefix)) count += 1;
    return count;
  }

  abortRun(runId: string, reason: StepAbort): void {
    const held = this.byRun.get(runId);
    if (held instanceof Set) for (const handle of held) handle.abort(reason);
    else held?.abort(reason);
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
