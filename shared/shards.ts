/**
 * Shards of the step engine (DESIGN §3, engine v2). A run lives on one shard, chosen by a stable hash of
 * its id: its run-store keys and the step queue its jobs go through share the shard's hash tag, so the
 * one-script transition (commit + next job + finish) stays in one Redis Cluster slot. Every worker and
 * producer of a deployment must use the same AGENTQ_SHARDS: the shard of a run is derived from its id.
 */

/** FNV-1a (32 bit) of the id: stable across processes and versions, cheap, well spread for short ids. */
export function shardOf(runId: string, shards: number): number {
  if (shards <= 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < runId.length; i += 1) {
    hash ^= runId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/** The hash tag of shard k, braces included: the same in run keys and in the shard's step-queue keys. */
export function shardTag(shard: number): string {
  return `{s${shard}}`;
}

/**
 * The BullMQ prefix of shard k's step queue: `<queue prefix>:{s<k>}`, so its keys read
 * `bull:{s0}:agentq-steps:wait`. Braces of the queue prefix itself are dropped here: the shard's tag must
 * be the first one in the key, or every shard would hash to the prefix's slot.
 */
export function stepQueuePrefix(queuePrefix: string, shard: number): string {
  return `${queuePrefix.replace(/[{}]/g, '')}:${shardTag(shard)}`;
}

/** Shard numbers 0 … shards-1. */
export function allShards(shards: number): number[] {
  return Array.from({ length: shards }, (_value, index) => index);
}

/** Shard k's step queue as Bull Board names it: `agentq-steps` with one shard, `s<k>-agentq-steps` with several. */
export function stepQueueBoardName(shard: number, shards: number, queueName: string): string {
  return shards > 1 ? `s${shard}-${queueName}` : queueName;
}
