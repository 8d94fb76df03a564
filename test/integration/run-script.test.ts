import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createRedis, runScript } from '../../shared/redis/create-redis.js';

/** runScript writes its own request bytes (create-redis.ts, FlatCommand): they must be what Redis reads. */
describe('runScript', () => {
  const connections: Redis[] = [];
  afterEach(() => {
    for (const redis of connections.splice(0)) redis.disconnect();
  });

  it('sends keys and arguments byte for byte: ASCII, 2-, 3- and 4-byte UTF-8, empty, long, numbers, many', async () => {
    const redis = createRedis(inject('redisUrl'), 'worker');
    connections.push(redis);
    const args = [
      'plain',
      'café',
      '€ 1 234',
      'emoji 🙂 here',
      '',
      'x'.repeat(70_000),
      'ünïcödé '.repeat(3000),
      ...Array.from({ length: 120 }, (_value, index) => `a${index}`),
    ];
    const echoed = await runScript<string[]>(
      redis,
      'local out = {KEYS[1]} for i = 1, #ARGV do out[#out + 1] = ARGV[i] end return out',
      ['κλειδί:1'],
      [...args, 42],
    );
    expect(echoed).toEqual(['κλειδί:1', ...args, '42']);
    // Byte lengths as Redis counts them.
    const lengths = await runScript<number[]>(
      redis,
      'local out = {} for i = 1, #ARGV do out[i] = #ARGV[i] end return out',
      [],
      args,
    );
    expect(lengths).toEqual(args.map((arg) => Buffer.byteLength(arg)));
  });
});
