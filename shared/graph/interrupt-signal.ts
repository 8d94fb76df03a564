/** Thrown by `context.interrupt()` when the step has no answer yet; the step processor parks the run. */
export class InterruptSignal extends Error {
  constructor(readonly request: unknown) {
    super('the step is waiting for input');
    this.name = 'InterruptSignal';
  }
}
