import { Redis } from 'ioredis';
import { startPrivateRedis } from '../../shared/redis/private-redis-server.js';

/** A redis-server of a test file's own, so its command counts (INFO commandstats) are that file's alone. */
export interface CountedRedis {
  url: string;
  /** A connection of the test's. */
  redis: Redis;
  /** How many times Redis has run `command` (lower case; scripts' own calls included). */
  calls(command: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startCountedRedis(): Promise<CountedRedis> {
  const server = await startPrivateRedis();
  const redis = new Redis(server.url);
  return {
    url: server.url,
    redis,
    async calls(command) {
      const stats = await redis.info('commandstats');
      return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0);
    },
    async stop() {
      redis.disconnect();
      await server.stop();
    },
  };
}
