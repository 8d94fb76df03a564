/**
 * Live model output of a run, sent over Redis pub/sub beside the durable event stream (never into it).
 * A `token-reset` opens every attempt's text: a client drops any partial text it holds for that step
 * and task (an earlier attempt's, or a re-delivered step's), then appends the `token`s that follow.
 * The step's committed message (`step-end`, `GET /v1/runs/:id/messages`) is what counts.
 *
 * While someone follows the run, each token is also kept in the run's capped token log and carries
 * that log's `id`, so a follower that reconnects gets the ones it missed (TokenLog).
 */
export interface TokenEvent {
  type: 'token' | 'token-reset';
  /** Its entry in the run's token log; absent when nobody followed the run as it was sent. */
  id?: string;
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

/**
 * Tokens after `after` are no longer kept (the log's cap or expiry passed them): a follower drops the
 * partial text it holds and waits for the steps' committed messages; the tokens that follow are live.
 */
export interface TokenGapEvent {
  type: 'token-gap';
  runId: string;
  /** The last token id the follower had. */
  after: string;
}

/** A pub/sub message back into a TokenEvent; null for anything else on the channel. */
export function parseTokenEvent(message: string): TokenEvent | null {
  try {
    const value = JSON.parse(message) as Partial<TokenEvent>;
    if (
      (value.type === 'token' || value.type === 'token-reset') &&
      typeof value.runId === 'string' &&
      typeof value.step === 'number' &&
      (value.id === undefined || typeof value.id === 'string')
    )
      return value as TokenEvent;
  } catch {
    // Not ours: ignore.
  }
  return null;
}

/** Is this event one of the live token kinds (tokens, resets, gaps), none of them a committed event? */
export function isTokenEvent(event: { type: string }): event is TokenEvent | TokenGapEvent {
  return event.type === 'token' || event.type === 'token-reset' || event.type === 'token-gap';
}
