/**
 * A round trip that callers at the same moment share: the first caller's goes at once, and those who call
 * while it is in flight share the next one, sent as it lands. Each caller gets the answer of a trip sent
 * after it called (never one already on its way), so sharing changes no answer, only how many trips a
 * worker with many steps in flight makes: a few per round trip time instead of one per caller. A failed
 * trip fails the callers who shared it. `send` reads what the callers left for it (their summed
 * increments, say) when it is sent.
 */
export function sharedRoundTrip<T>(send: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<unknown> = Promise.resolve();
  let next: Promise<T> | undefined;
  return () => {
    if (next) return next;
    const trip = inFlight.then(() => {
      next = undefined;
      return send();
    });
    next = trip;
    inFlight = trip.catch(() => undefined);
    return trip;
  };
}
