/**
 * Thrown by a node whose step must wait for something outside it, holding nothing meanwhile (a model call
 * handed to the provider's Batch API). The step processor parks the step: its job is moved to
 * the delayed set for `delayMs` without spending an attempt, and whoever has the answer wakes it sooner
 * (a promoted job). The woken step runs its node again and finds the answer saved (NodeContext.memo).
 */
export class ParkSignal extends Error {
  constructor(
    /** The longest the step sleeps if nobody wakes it (then it looks again, and parks again if need be). */
    readonly delayMs: number,
    /** What it waits on, for the run's `step-parked` event and the run inspector (e.g. `{providerBatch: …}`). */
    readonly waitingOn: Record<string, unknown>,
    message = 'the step waits without holding a worker',
    /**
     * Asked once the step is parked: true when its answer came while it was still parking (whoever had it
     * found the step not parked yet, so could not wake it), and the step is woken at once.
     * @default none: such a wake-up waits for `delayMs`
     */
    readonly arrived?: () => Promise<boolean>,
  ) {
    super(message);
    this.name = 'ParkSignal';
  }
}
