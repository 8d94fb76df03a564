/** Why a step's AbortSignal fired. The step processor decides what each means for the run. */
export class StepAbort extends Error {
  constructor(
    /** 'stale': another delivery of the step committed it while this one ran (a paid call found out). */
    readonly kind: 'cancel' | 'timeout' | 'deadline' | 'shutdown' | 'stale',
    message: string,
  ) {
    super(message);
    this.name = 'StepAbort';
  }
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
