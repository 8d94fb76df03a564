import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { redisTimeMs } from '../../shared/redis/redis-time.js';

/**
 * The collector's sense of time, read from Redis (`TIME`) rather than this machine's wall clock: the times
 * a flush records (when it was taken, when to poll next) are read again by whichever worker holds the
 * lease later, and two workers' clocks may disagree by minutes. `sync` once per round keeps the offset to
 * Redis's clock; `now` is then Redis's time give or take one round trip.
 */
export class RedisClock {
  private offsetMs = 0;

  constructor(private readonly redis: RedisConnection) {}

  async sync(): Promise<number> {
    const before = Date.now();
    const redisMs = await redisTimeMs(this.redis);
    const after = Date.now();
    this.offsetMs = redisMs - Math.round((before + after) / 2);
    return this.now();
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }
}
