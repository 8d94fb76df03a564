/**
 * Keeps `inFlight` units of work going until `total` have finished: each finish starts the next.
 * `start(index)` begins unit `index`; the caller reports finishes through the returned `finished()`.
 */
export function closedLoop(
  inFlight: number,
  total: number,
  start: (index: number) => Promise<void>,
): { finished(): void; done: Promise<number> } {
  let started = 0;
  let finished = 0;
  let resolveDone: (elapsedMs: number) => void = () => undefined;
  let rejectDone: (error: unknown) => void = () => undefined;
  const done = new Promise<number>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  const began = performance.now();
  const next = () => {
    if (started >= total) return;
    const index = started;
    started += 1;
    start(index).catch(rejectDone);
  };
  for (let i = 0; i < Math.min(inFlight, total); i += 1) next();
  return {
    finished() {
      finished += 1;
      if (finished >= total) resolveDone(performance.now() - began);
      else next();
    },
    done,
  };
}
