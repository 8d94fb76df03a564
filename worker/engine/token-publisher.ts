import type { TokenEvent } from '../../shared/contracts/token-event.js';
import type { TokenLog } from '../../shared/store/token-log.js';

/**
 * How old the last look for followers may be before held text makes another (ms): while nobody follows, an
 * answer's text costs a look per this much streaming instead of a script per piece; a follower who arrives
 * is found by the next look, and gets the text held so far at once.
 */
export const FOLLOWER_LOOK_MS = 50;

/**
 * How long an answer's text must have been coming before held text makes a look (ms): an answer that
 * comes whole at once (a short reply, a fast model) costs none, and is published only if someone followed
 * at the claim; its text reaches a later follower in the committed message a moment after.
 */
export const TEXT_SPAN_MS = 10;

/** A look for followers of a run's tokens made elsewhere (the paid call's claim makes one). */
export interface FollowerLook {
  followed: boolean;
  /** When the look was sent (ms). */
  at: number;
}

interface TokenPublisherOptions {
  /** The run store's token log: publishes each token, keeping it while someone follows the run. */
  log: TokenLog;
  runId: string;
  step: number;
  task: number;
  node: string;
  attempt: number;
  /** The latest look for followers made elsewhere, if any (read at each piece of text). */
  lastLook?: () => FollowerLook | undefined;
}

/**
 * Publishes one attempt's model text as it streams: a `token-reset` before the first piece (so a
 * client drops what an earlier attempt or a re-delivered step showed), then numbered `token`s. Each is
 * one script on the run's shard (kept in the run's token log when someone follows the run, then
 * published), sent in order on one connection without waiting: a lost token costs a follower at most a
 * `token-gap`, never the step (the committed message is the record).
 *
 * Only while someone follows the run: until a look finds a follower (the claim's, or one of its own at
 * most every FOLLOWER_LOOK_MS once text has been coming TEXT_SPAN_MS), the attempt's events are held here,
 * and a run nobody follows sends none. The look that finds one publishes the held events first, in order,
 * so a follower who arrives mid-answer gets the answer from its start; one who arrives in an answer's last
 * FOLLOWER_LOOK_MS, or after the claim of an answer that comes whole at once, may see that step's text only
 * in its committed message.
 */
export function createTokenPublisher({
  log,
  runId,
  step,
  task,
  node,
  attempt,
  lastLook,
}: TokenPublisherOptions): (text: string, call: string) => void {
  let index = 0;
  /** Events not published yet, nobody having followed at the last look; null once someone did. */
  let held: TokenEvent[] | null = [];
  let lookedAt = Number.NEGATIVE_INFINITY;
  /** When the first held event came. */
  let heldSince: number | undefined;
  let looking = false;
  const publish = (event: TokenEvent) => {
    log.append(event).catch(() => undefined);
  };
  const goLive = () => {
    const events = held ?? [];
    held = null;
    for (const event of events) publish(event);
  };
  const look = () => {
    looking = true;
    lookedAt = Date.now();
    log.followed(runId).then(
      (followed) => {
        looking = false;
        if (followed) goLive();
      },
      () => {
        // Redis faulty: held until a later look gets through (the committed message is the record).
        looking = false;
      },
    );
  };
  const send = (event: TokenEvent) => {
    if (!held) return publish(event);
    held.push(event);
    const now = Date.now();
    heldSince ??= now;
    if (looking) return;
    const outside = lastLook?.();
    if (outside && outside.at > lookedAt) {
      lookedAt = outside.at;
      if (outside.followed) return goLive();
    }
    if (now - lookedAt >= FOLLOWER_LOOK_MS && now - heldSince >= TEXT_SPAN_MS) look();
  };
  return (text, call) => {
    if (index === 0) send({ type: 'token-reset', runId, step, task, node, attempt });
    send({ type: 'token', runId, step, task, node, attempt, call, index: index++, text });
  };
}
