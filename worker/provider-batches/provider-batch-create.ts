import type { ProviderBatch, ProviderBatches } from '../../shared/ports/provider-batches.js';
import type { FlushRecord } from '../../shared/operations/batches/provider-batch-flush-record.js';
import { luaScript } from '../../shared/redis/lua-script.js';
import { runScript } from '../../shared/redis/create-redis.js';
import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import type { Keys } from '../../shared/store/keys.js';
import type { Logger } from '../../shared/telemetry/logger.js';

/** The metadata key a provider batch carries its flush id in (found again by it after a crash). */
const FLUSH_METADATA_KEY = 'agentq_flush';
/**
 * How far before the flush was taken its provider batch is looked for: the flush's time is Redis's, the
 * batch's `created_at` the provider's, and the two clocks may disagree a little.
 */
const SEARCH_MARGIN_SECONDS = 600;

/** The flush names this provider batch unless it names another already. KEYS and ARGV: the header of lua/claim-created-1.lua. */
const CLAIM_CREATED = luaScript(new URL('./lua/claim-created-1.lua', import.meta.url));

interface CreateOptions {
  redis: RedisConnection;
  keys: Keys;
  api: ProviderBatches;
  logger: Logger;
  /** Still the collector? Asked right before the create (a lapsed lease must not create). */
  holdsLease: () => Promise<boolean>;
  /** Redis's time (RedisClock). */
  now: () => number;
  /** Tests: called once the provider batch exists, before the flush names it (chaos tests kill the worker there). */
  created: () => Promise<void>;
}

/**
 * The provider batch of a flush in state `uploaded`, created at most once: → the batch the flush now names,
 * 'settle' (the agentq batch was cancelled before one was created), or undefined (not this round: the lease
 * is lost, or another worker's batch won). Every create is counted in the flush before it is sent; when
 * one was begun (its worker may have died before writing the answer down), the provider's batch list is
 * searched for the flush's id first, from the flush's own time (Redis's), never a worker's clock.
 */
export async function createOnce(
  options: CreateOptions,
  batchId: string,
  flush: FlushRecord,
  cancelled: boolean,
): Promise<ProviderBatch | 'settle' | undefined> {
  const { redis, keys, api, logger } = options;
  const key = keys.providerBatch(batchId).flush(flush.id);
  // A flush written before creates were counted has no counter: searched too.
  const begun = await redis.hget(key, 'creates');
  let batch =
    begun === null || Number(begun) > 0
      ? await api.findBatch(FLUSH_METADATA_KEY, flush.id, Math.floor(flush.createdAt / 1000) - SEARCH_MARGIN_SECONDS)
      : undefined;
  if (!batch) {
    if (cancelled) return 'settle';
    if (!(await options.holdsLease())) return undefined;
    await redis.hincrby(key, 'creates', 1);
    batch = await api.create(flush.fileId!, { [FLUSH_METADATA_KEY]: flush.id, agentq_batch: batchId });
    logger.info(
      { batchId, flush: flush.id, providerBatch: batch.id, requests: flush.requests },
      'provider batch created',
    );
  }
  await options.created();
  if ((await runScript<number>(redis, CLAIM_CREATED, [key], [batch.id, options.now()])) === 1) return batch;
  // Another worker created one for this flush meanwhile (this worker's lease lapsed mid-create): cancelled at
  // once, before the provider answers (and charges) its requests; the flush keeps the other.
  logger.error(
    { batchId, flush: flush.id, providerBatch: batch.id },
    'provider batch: a second one was created for the same flush; cancelling it',
  );
  await api
    .cancel(batch.id)
    .catch((error: unknown) =>
      logger.error({ batchId, providerBatch: batch.id, err: String(error) }, 'provider batch: cancel failed'),
    );
  return undefined;
}
