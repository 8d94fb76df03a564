import type { Logger } from '../telemetry/logger.js';

/** One thing a stopping process lets go of: `run` does it politely; `force` (when given) tears it down. */
interface ShutdownPart {
  /** Named in the last log line when it did not finish in time (e.g. "step workers"). */
  name: string;
  run: () => Promise<unknown>;
  /** Called when `run` did not finish by the deadline: drop connections, end threads. Must not wait. */
  force?: () => void;
}

/**
 * A shutdown that ends by a deadline whatever state Redis is in (a worker SIGTERMed as its Redis
 * went away said `worker shutting down` and kept reconnecting for over a minute). Parts run in stages
 * (each stage's parts at once, the stages in order); a part still running at the deadline is forced and
 * named; later stages then get only what time is left, and a part that finds none is forced at once.
 */
export class BoundedShutdown {
  private readonly unfinished: string[] = [];

  constructor(
    private readonly deadline: number,
    private readonly logger: Logger,
  ) {}

  /** Runs the parts at once; resolves when all finished, or at the deadline (forcing the rest). */
  async stage(parts: ShutdownPart[]): Promise<void> {
    await Promise.all(parts.map((part) => this.part(part)));
  }

  /** What did not finish in time, with why ("timed out" or its error). */
  get notReleased(): readonly string[] {
    return this.unfinished;
  }

  /**
   * The last log line: `stopped` when everything was let go of, else a warning naming what could not be
   * (a step job left to the stalled-job check, a lock that lapses by itself, a connection dropped).
   */
  finish(what: string, fields: Record<string, unknown> = {}): void {
    if (this.unfinished.length === 0) this.logger.info(fields, `${what} stopped`);
    else
      this.logger.warn(
        { ...fields, notReleased: this.unfinished },
        `${what} stopped without releasing: ${this.unfinished.join('; ')} (what it held lapses by itself: job locks and liveness within seconds, claims on paid work when their owner's liveness lapses)`,
      );
    this.logger.flush?.();
  }

  private async part({ name, run, force }: ShutdownPart): Promise<void> {
    const left = this.deadline - Date.now();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed out'>((resolve) => {
      timer = setTimeout(() => resolve('timed out'), Math.max(0, left));
    });
    const outcome = await Promise.race([
      Promise.resolve()
        .then(run)
        .then(
          () => 'done' as const,
          (error: unknown) => `failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 200),
        ),
      timedOut,
    ]);
    clearTimeout(timer);
    if (outcome === 'done') return;
    this.unfinished.push(`${name} (${outcome})`);
    try {
      force?.();
    } catch {
      // Forcing is the last resort: nothing more to do about a failure there.
    }
  }
}
