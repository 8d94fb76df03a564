/**
 * Where a follower of a run stands, as one `Last-Event-ID`: the last committed event it got and, after
 * an underscore, the last token of the run's token log (`1700000000000-3_1700000000100-42`). A bare event
 * id (what streams sent before tokens had ids) resumes the committed events and starts tokens from now.
 */
export interface StreamCursor {
  /** A committed event's stream id; '0-0' before the first. */
  event: string;
  /** A token log entry's id; null: tokens from now on. */
  token: string | null;
}

const ID = String.raw`\d{1,16}-\d{1,16}`;

/** What a `Last-Event-ID` (or `lastEventId`) must look like. */
export const STREAM_CURSOR_PATTERN = new RegExp(`^${ID}(?:_${ID})?$`);

export function parseStreamCursor(text: string): StreamCursor | null {
  if (!STREAM_CURSOR_PATTERN.test(text)) return null;
  const [event = '0-0', token] = text.split('_');
  return { event, token: token ?? null };
}

export function formatStreamCursor({ event, token }: StreamCursor): string {
  return token === null ? event : `${event}_${token}`;
}

/** Stream ids (`<ms>-<seq>`) in order. */
export function compareStreamIds(left: string, right: string): number {
  const [leftMs = 0n, leftSeq = 0n] = left.split('-').map(BigInt);
  const [rightMs = 0n, rightSeq = 0n] = right.split('-').map(BigInt);
  if (leftMs !== rightMs) return leftMs < rightMs ? -1 : 1;
  return leftSeq === rightSeq ? 0 : leftSeq < rightSeq ? -1 : 1;
}

/**
 * A token log numbers its entries `<created ms>-1`, `-2`, … (one epoch per log): is `id` the entry right
 * after `cursor` (`next`), one already had (`seen`), or further on, with entries missed between (`jump`)?
 */
export function followsInLog(cursor: string, id: string): 'next' | 'seen' | 'jump' {
  const [cursorEpoch, cursorSeq = '0'] = cursor.split('-');
  const [epoch, seq = '0'] = id.split('-');
  if (epoch !== cursorEpoch) return compareStreamIds(id, cursor) <= 0 ? 'seen' : 'jump';
  const step = BigInt(seq) - BigInt(cursorSeq);
  return step <= 0n ? 'seen' : step === 1n ? 'next' : 'jump';
}
