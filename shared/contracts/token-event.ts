/**
 * Live model output of a run, sent over Redis pub/sub beside the durable event stream (never into it).
 * A `token-reset` opens every attempt's text: a client drops any partial text it holds for that step
 * and task (an earlier attempt's, or a re-delivered step's), then appends the `token`s that follow.
 * The step's committed message (`step-end`, `GET /v1/runs/:id/messages`) is what counts.
 */
export interface TokenEvent {
  type: 'token' | 'token-reset';
  runId: string;
  /** The superstep. */
  step: number;
  task: number;
  node: string;
  attempt: number;
  /** The model call within the step (its memo key, e.g. `model`). Absent on `token-reset`. */
  call?: string;
  /** 0, 1, 2, … per attempt: a gap means a token was missed. Absent on `token-reset`. */
  index?: number;
  /** The text piece. Absent on `token-reset`. */
  text?: string;
}

/** A pub/sub message back into a TokenEvent; null for anything else on the channel. */
export function parseTokenEvent(message: string): TokenEvent | null {
  try {
    const value = JSON.parse(message) as Partial<TokenEvent>;
    if (
      (value.type === 'token' || value.type === 'token-reset') &&
      typeof value.runId === 'string' &&
      typeof value.step === 'number'
    )
      return value as TokenEvent;
  } catch {
    // Not ours: ignore.
  }
  return null;
}

/** Is this event one of the live (non-durable) token kinds? */
export function isTokenEvent(event: { type: string }): event is TokenEvent {
  return event.type === 'token' || event.type === 'token-reset';
}
