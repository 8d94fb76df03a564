/** Thrown by `context.interrupt()` when the step has no answer yet; the step processor parks the run. */
export class InterruptSignal extends Error {
  constructor(
    readonly request: unknown,
    /** The interrupt hands out a callback URL that works this long after the step first asked. @default none */
    readonly callback?: { timeoutMs: number },
  ) {
    super('the step is waiting for input');
    this.name = 'InterruptSignal';
  }
}
