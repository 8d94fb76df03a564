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

/** Calls and microseconds per command (`evalsha`, `hset`, …), from `INFO commandstats`. */
export async function commandStats(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const info = await redis.info('commandstats');
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm))
    stats.set(match[1]!, { calls: Number(match[2]), usec: Number(match[3]) });
  return stats;
}

/** What each command added between two readings, most calls first (commands with none left out). */
export function perCommandDelta(
  before: Map<string, { calls: number; usec: number }>,
  after: Map<string, { calls: number; usec: number }>,
): [string, { calls: number; usec: number }][] {
  const deltas: [string, { calls: number; usec: number }][] = [];
  for (const [command, stat] of after) {
    const was = before.get(command) ?? { calls: 0, usec: 0 };
    if (stat.calls > was.calls) deltas.push([command, { calls: stat.calls - was.calls, usec: stat.usec - was.usec }]);
  }
  return deltas.sort((a, b) => b[1].calls - a[1].calls);
}
