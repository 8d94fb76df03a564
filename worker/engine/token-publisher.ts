import type { TokenEvent } from '../../shared/contracts/token-event.js';
import type { TokenLog } from '../../shared/store/token-log.js';

interface TokenPublisherOptions {
  /** The run store's token log: publishes each token, keeping it while someone follows the run. */
  log: TokenLog;
  runId: string;
  step: number;
  task: number;
  node: string;
  attempt: number;
}

/**
 * Publishes one attempt's model text as it streams: a `token-reset` before the first piece (so a
 * client drops what an earlier attempt or a re-delivered step showed), then numbered `token`s. Each is
 * one script on the run's shard (kept in the run's token log when someone follows the run, then
 * published), sent in order on one connection without waiting: a lost token costs a follower at most a
 * `token-gap`, never the step (the committed message is the record).
 */
export function createTokenPublisher({
  log,
  runId,
  step,
  task,
  node,
  attempt,
}: TokenPublisherOptions): (text: string, call: string) => void {
  let index = 0;
  const publish = (event: TokenEvent) => {
    log.append(event).catch(() => undefined);
  };
  return (text, call) => {
    if (index === 0) publish({ type: 'token-reset', runId, step, task, node, attempt });
    publish({ type: 'token', runId, step, task, node, attempt, call, index: index++, text });
  };
}
