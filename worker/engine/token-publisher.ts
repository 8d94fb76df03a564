import { isCluster, type RedisConnection } from '../../shared/redis/connect-redis.js';
import type { TokenEvent } from '../../shared/contracts/token-event.js';

interface TokenPublisherOptions {
  redis: RedisConnection;
  /** The run's token channel (`Keys.tokenChannel`). */
  channel: string;
  runId: string;
  step: number;
  task: number;
  node: string;
  attempt: number;
}

/**
 * Publishes one attempt's model text as it streams: a `token-reset` before the first piece (so a
 * client drops what an earlier attempt or a re-delivered step showed), then numbered `token`s. Fire
 * and forget: PUBLISH writes nothing durable, and a lost token costs a subscriber only a flicker,
 * never the step (the committed message is the record).
 */
export function createTokenPublisher({
  redis,
  channel,
  runId,
  step,
  task,
  node,
  attempt,
}: TokenPublisherOptions): (text: string, call: string) => void {
  let index = 0;
  // On a Cluster, sharded pub/sub (SPUBLISH: routed by the channel's slot, so in order; see TokenHub).
  const send = isCluster(redis)
    ? (message: string) => redis.spublish(channel, message)
    : (message: string) => redis.publish(channel, message);
  const publish = (event: TokenEvent) => {
    send(JSON.stringify(event)).catch(() => undefined);
  };
  return (text, call) => {
    if (index === 0) publish({ type: 'token-reset', runId, step, task, node, attempt });
    publish({ type: 'token', runId, step, task, node, attempt, call, index: index++, text });
  };
}
