import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { assertHashTaggedPrefix, hashTagOf, parseClusterNodes } from '../../shared/config/redis-cluster-nodes.js';

function refusal(fn: () => unknown): AgentqError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AgentqError);
    return error as AgentqError;
  }
  throw new Error('expected a refusal');
}

describe('REDIS_CLUSTER_NODES', () => {
  it('parses seed nodes, IPv6 in brackets included', () => {
    expect(parseClusterNodes(' 10.0.0.1:7000, redis-b:7001,[::1]:7002 ')).toEqual([
      { host: '10.0.0.1', port: 7000 },
      { host: 'redis-b', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
  });

  it('refuses a malformed entry by name', () => {
    const error = refusal(() => parseClusterNodes('10.0.0.1:7000,10.0.0.2'));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toContain('"10.0.0.2" is not host:port');
    expect(refusal(() => parseClusterNodes('h:70000')).message).toContain('"h:70000"');
    expect(refusal(() => parseClusterNodes(' , ')).message).toContain('empty');
  });

  it('switches the config to cluster mode with a hash-tagged queue prefix', () => {
    const config = loadConfig({
      REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001',
      AGENTQ_QUEUE_PREFIX: '{agentq}',
    });
    expect(config.redisClusterNodes).toEqual([
      { host: '127.0.0.1', port: 7000 },
      { host: '127.0.0.1', port: 7001 },
    ]);
    expect(config.redisUrl).toBeUndefined();
    expect(loadConfig({}).redisClusterNodes).toBeUndefined();
  });

  it('refuses REDIS_URL and REDIS_CLUSTER_NODES together', () => {
    const error = refusal(() =>
      loadConfig({
        REDIS_URL: 'redis://127.0.0.1:6379',
        REDIS_CLUSTER_NODES: '127.0.0.1:7000',
        AGENTQ_QUEUE_PREFIX: '{agentq}',
      }),
    );
    expect(error.message).toContain('REDIS_URL and REDIS_CLUSTER_NODES are both set');
    expect(error.message).toContain('unset one of them');
  });

  it('refuses a queue prefix without a hash tag in cluster mode, naming the fix', () => {
    const error = refusal(() => loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000' }));
    expect(error.message).toContain('AGENTQ_QUEUE_PREFIX "bull" has no hash tag');
    expect(error.message).toContain('"{bull}"');
    // One Redis needs no tag: the default keeps working there.
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).queuePrefix).toBe('bull');
  });
});

describe('hash tags', () => {
  it('finds the first non-empty {…} as Redis Cluster does', () => {
    expect(hashTagOf('{agentq}:runs')).toBe('agentq');
    expect(hashTagOf('agentq:{s3}:run:1')).toBe('s3');
    expect(hashTagOf('a{}b{c}')).toBeUndefined();
    expect(hashTagOf('plain')).toBeUndefined();
    expect(() => assertHashTaggedPrefix('{x}', 'p')).not.toThrow();
    expect(() => assertHashTaggedPrefix('x', 'p')).toThrow(/has no hash tag/);
  });
});

describe('one connection factory for both kinds of Redis', () => {
  it('connects a Cluster when REDIS_CLUSTER_NODES is set, and one Redis otherwise', async () => {
    const { connectRedis, isCluster, describeRedisTarget } = await import('../../shared/redis/connect-redis.js');
    const config = loadConfig({
      REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001',
      AGENTQ_QUEUE_PREFIX: '{agentq}',
    });
    const cluster = connectRedis(config, 'producer');
    const single = connectRedis(loadConfig({ REDIS_URL: 'redis://127.0.0.1:7002' }), 'producer');
    try {
      expect(isCluster(cluster)).toBe(true);
      expect(isCluster(single)).toBe(false);
      expect(describeRedisTarget(config)).toBe('Redis Cluster (seeds 127.0.0.1:7000,127.0.0.1:7001)');
    } finally {
      cluster.disconnect();
      single.disconnect();
    }
  });
});

describe('shard tags', () => {
  it('hash as Redis Cluster does (CRC16 mod 16384) and fall into equal slices of the slots, one shard keeping {s0}', async () => {
    const { shardTags, slotOfTag, shardOfQueuePrefix, stepQueuePrefix } =
      await import('../../shared/contracts/shards.js');
    // Slots from CLUSTER KEYSLOT on Redis 7.0.
    expect(slotOfTag('s0')).toBe(11097);
    expect(slotOfTag('s2')).toBe(2843);
    expect(shardTags(1)).toEqual(['{s0}']);
    for (const shards of [2, 3, 6, 16]) {
      const tags = shardTags(shards);
      expect(new Set(tags).size).toBe(shards);
      tags.forEach((tag, shard) => {
        const slot = slotOfTag(tag.slice(1, -1));
        expect(slot).toBeGreaterThanOrEqual(Math.floor((shard * 16384) / shards));
        expect(slot).toBeLessThan(Math.floor(((shard + 1) * 16384) / shards));
        expect(tag).toMatch(new RegExp(`^\\{s${shard}(-\\d+)?\\}$`));
        expect(shardOfQueuePrefix(stepQueuePrefix('{agentq}', shard, shards), shards)).toBe(shard);
      });
    }
  });
});
