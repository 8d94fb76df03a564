import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import type { Keys } from '../../shared/store/keys.js';

/**
 * The bytes a run keeps in Redis, read back from its keys: every hash field and value, list element and
 * stream entry (id, field names, values), the JSON as stored. What the storage budget should have charged,
 * measured independently of the scripts that charge it.
 */
export async function storedRunBytes(redis: RedisConnection, keys: Keys, runId: string): Promise<number> {
  const run = keys.run(runId);
  const hashBytes = async (key: string) =>
    Object.entries(await redis.hgetall(key)).reduce((sum, [field, value]) => sum + field.length + value.length, 0);
  const listBytes = async (key: string) =>
    (await redis.lrange(key, 0, -1)).reduce((sum, value) => sum + value.length, 0);
  let events = 0;
  for (let from = '-'; ;) {
    const page = await redis.xrange(run.events, from, '+', 'COUNT', 1000);
    for (const [id, fields] of page) events += id.length + fields.reduce((sum, value) => sum + value.length, 0);
    if (page.length < 1000) break;
    from = `(${page.at(-1)![0]}`;
  }
  const [meta, state, record, messages, steps] = await Promise.all([
    hashBytes(run.meta),
    hashBytes(run.state),
    hashBytes(run.record),
    listBytes(run.messages),
    listBytes(run.steps),
  ]);
  return meta + state + record + messages + steps + events;
}

/** The bytes the storage budget charged the run: its entry in its tenant's ledger on its shard. */
export async function chargedRunBytes(
  redis: RedisConnection,
  keys: Keys,
  tenant: string,
  runId: string,
): Promise<number> {
  const ledger = keys.tenantRunStorage(tenant, keys.shardOf(runId));
  return Number((await redis.hget(ledger.charges, keys.runMeta(runId))) ?? 0);
}
