/**
 * Shards of the step engine (docs/concepts/shards.md). A run lives on one shard, chosen by a stable
 * hash of its id: its run-store keys and the step queue its jobs go through share the shard's hash tag, so the
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

/** Redis Cluster's slot of a hash tag's content: CRC16 (XMODEM) mod 16384, as in the cluster spec. */
export function slotOfTag(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % CLUSTER_SLOTS;
}

const CLUSTER_SLOTS = 16384;
const tagsByCount = new Map<number, string[]>();

/**
 * The hash tags of a deployment's shards, braces included: the same in run keys and in the shard's
 * step-queue keys. Shard k's tag hashes into the k-th of `shards` equal slices of the 16384 slots, so
 * the shards spread evenly over the masters of a cluster made the usual way (`redis-cli --cluster
 * create` gives each master one contiguous, equal range): 3 shards on 3 masters is one each, 6 is two
 * each. `{s<k>}` itself where it falls in its slice (always with one shard), else `{s<k>-<j>}` with the
 * smallest j that does. (Plain `{s0}`…`{s5}` put four of six shards on one of three masters.)
 */
export function shardTags(shards: number): readonly string[] {
  let tags = tagsByCount.get(shards);
  if (!tags) {
    tags = allShards(Math.max(1, shards)).map((shard) => {
      const from = Math.floor((shard * CLUSTER_SLOTS) / Math.max(1, shards));
      const to = Math.floor(((shard + 1) * CLUSTER_SLOTS) / Math.max(1, shards));
      for (let variant = 0; ; variant += 1) {
        const tag = variant === 0 ? `s${shard}` : `s${shard}-${variant}`;
        const slot = slotOfTag(tag);
        if (slot >= from && slot < to) return `{${tag}}`;
      }
    });
    tagsByCount.set(shards, tags);
  }
  return tags;
}

/** The hash tag of shard k of `shards`, braces included (see shardTags). */
export function shardTag(shard: number, shards: number): string {
  return shardTags(shards)[shard]!;
}

/**
 * The BullMQ prefix of shard k's step queue: `<queue prefix>:{<shard tag>}`, so its keys read
 * `bull:{s0}:agentq-steps:wait`. Braces of the queue prefix itself are dropped here: the shard's tag must
 * be the first one in the key, or every shard would hash to the prefix's slot.
 */
export function stepQueuePrefix(queuePrefix: string, shard: number, shards: number): string {
  return `${queuePrefix.replace(/[{}]/g, '')}:${shardTag(shard, shards)}`;
}

/** The shard whose step-queue prefix is `prefix` (stepQueuePrefix), or undefined for another queue's. */
export function shardOfQueuePrefix(prefix: string, shards: number): number | undefined {
  const index = shardTags(shards).findIndex((tag) => prefix.endsWith(`:${tag}`));
  return index < 0 ? undefined : index;
}

/** Shard numbers 0 … shards-1. */
export function allShards(shards: number): number[] {
  return Array.from({ length: shards }, (_value, index) => index);
}

/** Shard k's step queue as Bull Board names it: `agentq-steps` with one shard, `s<k>-agentq-steps` with several. */
export function stepQueueBoardName(shard: number, shards: number, queueName: string): string {
  return shards > 1 ? `s${shard}-${queueName}` : queueName;
}
