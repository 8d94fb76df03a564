import type { RedisConnection } from './redis-connection.js';

/**
 * Redis's clock (`TIME`) in ms: the one clock every process of a deployment shares. Times one process
 * writes and another compares (leases, heartbeats, grace periods) are read from it, since two machines'
 * wall clocks may disagree by minutes.
 */
export async function redisTimeMs(redis: RedisConnection): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
