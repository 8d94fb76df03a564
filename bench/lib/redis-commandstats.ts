import type { Redis } from 'ioredis';

/** Total calls and microseconds over all commands, from `INFO commandstats`. */
export async function commandTotals(redis: Redis): Promise<{ calls: number; usec: number }> {
  const info = await redis.info('commandstats');
  let calls = 0;
  let usec = 0;
  for (const match of info.matchAll(/^cmdstat_[^:]+:calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(match[1]);
    usec += Number(match[2]);
  }
  return { calls, usec };
}
