/** What a step's commit needs to carry a paid result's save: the claim it ends and the call's recording (recordCallArgs). */
export interface CarriedSave {
  /** The claim's field in the run's memo hash, and who holds it (it is ended only if still theirs). */
  field: string;
  claimant: string;
  /** The call's recording as record_call's arguments, when the run records `full`. */
  record?: (string | number)[];
}

interface Held {
  /** Sends the save on its own (PaidClaims.save): the path every result took before carrying. */
  send: () => Promise<unknown>;
  carried: CarriedSave;
  sent?: Promise<unknown>;
  taken: boolean;
}

/**
 * One step attempt's paid result whose save is not sent yet (NodeContext.memo), at most one at a time.
 *
 * Most nodes return right after their model call. Their step's commit then carries the save: the call's
 * recording and the end of its claim go in the commit's own script, and the result itself is not written
 * to the memo hash only for that commit to drop it (one round trip and two writes fewer per model step).
 * A result is held only until the end of the event-loop turn its answer arrived in (setImmediate), or
 * until the node's next paid call, whichever comes first: then it is sent on its own, as before. So a node
 * that goes on to wait for anything has its result in Redis before it resumes, and the only added
 * exposure is a process killed within that one turn — the same kind of window as between an answer's
 * arrival and its own save's round trip.
 */
export class HeldSave {
  private held: Held | undefined;
  /** The paid calls' own bookkeeping (PaidCall.after), waited for once the commit is sent. */
  private readonly companions: Promise<unknown>[] = [];

  /** A paid call's bookkeeping that handles its own failures: the step waits for it after its commit is sent. */
  alongside(work: Promise<unknown>): void {
    this.companions.push(work);
  }

  /** Waits for the bookkeeping handed over so far (its failures are its own: they are not the step's). */
  async settleAlongside(): Promise<void> {
    if (this.companions.length > 0) await Promise.allSettled(this.companions.splice(0));
  }

  /** Holds a result; a result held before it is sent first (a node's second paid call flushes the first). */
  hold(send: () => Promise<unknown>, carried: CarriedSave): void {
    if (this.held) void this.flush().catch(() => undefined);
    const held: Held = { send, carried, taken: false };
    this.held = held;
    setImmediate(() => {
      if (this.held === held) void this.flush().catch(() => undefined);
    });
  }

  /**
   * Sends the held result's save unless a commit carries it, and waits for it: before a paid call, a
   * parallel task's commit, a failure's handling. Rejects as the save did (its result is then kept in
   * memory by PaidClaims for this process's next attempt).
   */
  flush(): Promise<unknown> {
    const held = this.held;
    if (!held || held.taken) return Promise.resolve(undefined);
    held.sent ??= held.send();
    // Marked as handled: a turn-end flush nobody awaits must not be an unhandled rejection; awaiting it still throws.
    held.sent.catch(() => undefined);
    return held.sent;
  }

  /** Waits for the held result's save if it was sent already (the node waited on something after its call); an unsent one stays held. */
  settleSent(): Promise<unknown> {
    return this.held?.sent ?? Promise.resolve(undefined);
  }

  /** The held result for the commit to carry, if its save has not been sent; the commit then owns it. */
  take(): CarriedSave | undefined {
    const held = this.held;
    if (!held || held.taken || held.sent) return undefined;
    held.taken = true;
    return held.carried;
  }

  /**
   * The commit that carried the result did not reach Redis (a connection fault): the save is sent on its own
   * after all, so the result is kept in memory and saved when Redis takes writes again (PaidClaims.save).
   */
  sendAfterFailedCarry(): Promise<unknown> {
    const held = this.held;
    if (!held?.taken || held.sent) return Promise.resolve(undefined);
    held.sent = held.send();
    held.sent.catch(() => undefined);
    return held.sent;
  }
}

/**
 * A step's commit, carrying its held result when that result's save has not been sent (HeldSave.take); a
 * save sent already is waited for first, so it lands before the commit. A carrying commit that fails sends
 * the save on its own before the failure goes on: PaidClaims keeps the result for this process's next
 * attempt while Redis refuses it. The paid calls' bookkeeping is waited for after the commit, either way.
 * `ended`: the claimant whose claim the commit ended.
 */
export async function commitCarrying<T>(
  held: HeldSave | undefined,
  commit: (carried: CarriedSave | undefined) => Promise<T>,
  ended: (claimant: string) => void,
): Promise<T> {
  const carried = held?.take();
  if (!carried) await held?.flush();
  try {
    const result = await commit(carried);
    if (carried) ended(carried.claimant);
    return result;
  } catch (error) {
    if (carried) await held!.sendAfterFailedCarry().catch(() => undefined);
    throw error;
  } finally {
    await held?.settleAlongside();
  }
}
