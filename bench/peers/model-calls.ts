/** The scripted model's log as the crash workload reads it. */
export interface ModelCall {
  /** `<run> <step>` from the prompt (peer-steps.ts), `?` when it named none. */
  step: string;
  receivedAt: number;
  answeredAt?: number;
  outcome: 'pending' | 'answered' | 'aborted';
}

/**
 * Calls made again after an answer to the same (run, step) had already arrived: a step that paid for
 * its answer and then paid again. A call cut off by the kill before its answer arrived is not counted
 * (nothing was paid for; asking again is the only way on): an answer the server sent after `killedAt`
 * to a call made before it went to a dead process. With `settledMs`, only answers sent at least that
 * long before the kill count: ones the step had surely taken in (a step's work after its answer takes
 * milliseconds), so what remains is a saved answer lost, not one still in the socket or the event loop.
 */
export function callsAgainAfterAnswer(calls: readonly ModelCall[], killedAt: number, settledMs = 0): number {
  const firstAnswer = new Map<string, number>();
  for (const call of calls)
    if (
      call.outcome === 'answered' &&
      call.answeredAt !== undefined &&
      (call.receivedAt >= killedAt || call.answeredAt < killedAt - settledMs)
    )
      firstAnswer.set(call.step, Math.min(firstAnswer.get(call.step) ?? Infinity, call.answeredAt));
  return calls.filter((call) => call.receivedAt > (firstAnswer.get(call.step) ?? Infinity)).length;
}
