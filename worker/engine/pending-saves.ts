/**
 * One step attempt's paid results whose saves are on their way to Redis (NodeContext.memo), and the paid
 * calls' own bookkeeping (a budget's count) that the step waits for once its commit is sent.
 *
 * A paid result's save is sent the moment its answer is in, as it always was: how long an answer sits in
 * this process unsaved is what a kill -9 can cost twice, and it must not grow with what the step does next.
 * What changed is that the node no longer waits for the save's reply: it goes on at once, and a step whose
 * node returns right away sends its commit on the same connection behind the save, so Redis runs the save
 * first. The step waits for the saves before anything that could let another delivery look for them — a
 * next paid call's claim, a failure's handling, a parallel task's commit — and after its own commit; a save
 * that failed is then the step's failure, as it was when the node waited for it (PaidClaims keeps the result
 * in memory for this process's next attempt while Redis refuses it).
 */
export class PendingSaves {
  private readonly saves: Promise<unknown>[] = [];
  /** The paid calls' own bookkeeping (PaidCall.after), waited for once the commit is sent. */
  private readonly companions: Promise<unknown>[] = [];

  /** A save just sent: its failure is the step's, found where the step waits for it. */
  sent(save: Promise<unknown>): void {
    // Marked as handled until then: a failed save nobody waits for yet is no unhandled rejection.
    save.catch(() => undefined);
    this.saves.push(save);
  }

  /** A paid call's bookkeeping that handles its own failures: the step waits for it after its commit is sent. */
  alongside(work: Promise<unknown>): void {
    this.companions.push(work);
  }

  /** Waits for the saves sent so far; rejects as the first that failed did. */
  async landed(): Promise<void> {
    if (this.saves.length > 0) await Promise.all(this.saves.splice(0));
  }

  /** Waits for the bookkeeping handed over so far (its failures are its own: they are not the step's). */
  async settled(): Promise<void> {
    if (this.companions.length > 0) await Promise.allSettled(this.companions.splice(0));
  }
}

/**
 * A step's commit, sent without waiting for the paid results' saves sent before it (the step scripts'
 * connection runs them first), then the saves and the paid calls' bookkeeping waited for. Once the commit is
 * in, a save's failure no longer matters to the step (its result was for a step now committed, or fenced); a
 * commit that failed fails the step as before.
 */
export async function commitBehindSaves<T>(pending: PendingSaves | undefined, commit: () => Promise<T>): Promise<T> {
  if (!pending) return commit();
  try {
    return await commit();
  } finally {
    await pending.landed().catch(() => undefined);
    await pending.settled();
  }
}
