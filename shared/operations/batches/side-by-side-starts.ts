import type { RedisConnection } from '../../redis/connect-redis.js';
import { runScript } from '../../redis/create-redis.js';
import type { Keys } from '../../store/keys.js';
import type { BatchMeta } from './batch-meta.js';
import { CLAIM_DEFERRED, CLAIM_MANY } from './batch-scripts.js';

/** Items a batch claims and starts side by side at most: bounds one burst of runs (a provider batch's are all free). */
const SIDE_BY_SIDE = 32;

/** CLAIM_MANY's reply: the items claimed, then the batch's meta (HGETALL) or claim_next's stop code. */
type ClaimManyReply = [...[number, string][], string[] | number];

/**
 * Fills a batch's free slots at once: their items claimed in one script, their runs started side by side
 * (`start`: each admitted and created as one alone is). A batch's first wave of 20 starts in a few round
 * trips instead of 40 in turn, which left its last question waiting for all the others'. → how many
 * started, and whether to stop: no free slot, nothing left, or the admission refused one (it stays
 * claimed and the batch's meta says `deferred`, as topUp leaves it). Not stopping: more may be free (every
 * claim asked for was made), or items refused before wait (the next claim says so).
 */
export async function startSideBySide(
  { redis, keys }: { redis: RedisConnection; keys: Keys },
  meta: BatchMeta,
  start: (index: number, item: string) => Promise<boolean>,
): Promise<{ started: number; stop: boolean }> {
  const batchKeys = keys.batch(meta.id);
  const replies = await runScript<ClaimManyReply>(
    redis,
    CLAIM_MANY,
    [batchKeys.meta, batchKeys.inflight, batchKeys.items],
    [`${meta.id}.i`, Date.now(), Math.min(meta.concurrency, SIDE_BY_SIDE)],
  );
  const last = replies.pop();
  const claims = replies as [number, string][];
  const outcomes = await Promise.allSettled(claims.map(([index, item]) => start(index, item)));
  const failure = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  const started = outcomes.filter((outcome) => outcome.status === 'fulfilled' && outcome.value).length;
  if (started < claims.length) {
    await redis.hincrby(batchKeys.meta, 'deferred', 1);
    return { started, stop: true };
  }
  return { started, stop: typeof last === 'number' && last !== CLAIM_DEFERRED };
}
