/** A load left for a quiet moment (loadWhenIdle); `stop` gives up on it (the worker closes). */
export interface IdleLoad {
  stop(): void;
}

export interface IdleLoadOptions {
  /** Whether the process is busy now (a step running). */
  busy(): boolean;
  /** The load: main-thread CPU that would hold up whatever runs beside it. */
  load(): Promise<void>;
  onError(error: unknown): void;
  /** How often to look; the load starts after two looks in a row found the process idle. */
  pollMs: number;
}

/**
 * Runs `load` once the process has been idle for a poll interval (two looks in a row, `pollMs` apart,
 * found nothing busy), or never if stopped first. For what a worker will want but need not have to take
 * its first steps: the tokenizer's ~0.2–0.5 s of compile blocks the event loop, and loaded as the first
 * jobs arrive (a worker started after a crash finds the dead one's steps waiting) it held up the first
 * model requests and every step beside them. A worker that is never idle loads it on first use instead.
 */
export function loadWhenIdle({ busy, load, onError, pollMs }: IdleLoadOptions): IdleLoad {
  let idleLooks = 0;
  const timer = setInterval(() => {
    idleLooks = busy() ? 0 : idleLooks + 1;
    if (idleLooks < 2) return;
    clearInterval(timer);
    load().catch(onError);
  }, pollMs);
  // Never what keeps a finished process alive.
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
