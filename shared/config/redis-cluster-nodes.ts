import { AgentqError } from '../contracts/errors.js';

export interface RedisClusterNode {
  host: string;
  port: number;
}

/** `REDIS_CLUSTER_NODES` (`host:port,host:port,…`) as seed nodes; a malformed entry is refused by name. */
export function parseClusterNodes(value: string): RedisClusterNode[] {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) {
    throw new AgentqError(
      'INVALID_INPUT',
      'REDIS_CLUSTER_NODES is empty: give the seed nodes as host:port,host:port (any masters of the cluster)',
    );
  }
  return entries.map((entry) => {
    const match = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(entry);
    const port = match ? Number(match[2]) : NaN;
    if (!match || port < 1 || port > 65535) {
      throw new AgentqError(
        'INVALID_INPUT',
        `REDIS_CLUSTER_NODES entry "${entry}" is not host:port: write e.g. REDIS_CLUSTER_NODES=10.0.0.1:7000,10.0.0.2:7000`,
      );
    }
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  });
}

/**
 * Start-time refusals of cluster mode that need no Redis. Both Redis settings at once would leave it to
 * chance which one a component uses. The queue prefix must carry a hash tag (`{agentq}`): the queues
 * outside the step engine (intake, ingest, batches, webhooks) use it as is, and BullMQ's scripts touch
 * several keys of a queue at once, which on Cluster must share a slot. The step queues drop the prefix's
 * braces and tag each shard instead (shared/contracts/shards.ts), so they still spread over the masters.
 */
export function checkClusterConfig(redisUrl: string | undefined, queuePrefix: string): void {
  if (redisUrl !== undefined) {
    throw new AgentqError(
      'INVALID_INPUT',
      'REDIS_URL and REDIS_CLUSTER_NODES are both set: REDIS_URL means one Redis, REDIS_CLUSTER_NODES a Redis Cluster; unset one of them',
    );
  }
  assertHashTaggedPrefix(queuePrefix, 'AGENTQ_QUEUE_PREFIX');
}

/** The hash tag Redis Cluster hashes for `key` (the first non-empty `{…}`), or undefined when it has none. */
export function hashTagOf(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open < 0) return undefined;
  const close = key.indexOf('}', open + 1);
  if (close <= open + 1) return undefined;
  return key.slice(open + 1, close);
}

/**
 * Refuses a BullMQ prefix without a hash tag on a Cluster connection: BullMQ's scripts touch several keys
 * of a queue at once, and without a tag they land in different slots (CROSSSLOT on the first `add`).
 */
export function assertHashTaggedPrefix(prefix: string, what: string): void {
  if (hashTagOf(prefix) === undefined) {
    throw new AgentqError(
      'INVALID_INPUT',
      `${what} "${prefix}" has no hash tag: on Redis Cluster a BullMQ queue prefix must contain one so that all of a queue's keys share a slot; set it to "{${prefix.replace(/[{}]/g, '')}}"`,
    );
  }
}
