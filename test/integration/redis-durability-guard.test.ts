import { describe, expect, it } from 'vitest';
import { startPrivateRedis } from '../../shared/redis/private-redis-server.js';
import { createLogger } from '../../shared/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { testConfig } from '../helpers/test-env.js';

describe('production Redis guard', () => {
  it('refuses to start with NODE_ENV=production on a Redis with AOF off, naming the setting', async () => {
    const redis = await startPrivateRedis({ appendonly: false });
    try {
      const config = { ...testConfig(), redisUrl: redis.url, production: true };
      await expect(startWorker({ config, logger: createLogger('silent') })).rejects.toThrow(/appendonly is off \(set `appendonly yes`/);
    } finally {
      await redis.stop();
    }
  });

  it('refuses an evicting maxmemory-policy in production, and only warns in development', async () => {
    const redis = await startPrivateRedis({ appendonly: true });
    try {
      const { Redis } = await import('ioredis');
      const admin = new Redis(redis.url);
      await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
      admin.disconnect();
      const config = { ...testConfig(), redisUrl: redis.url };
      await expect(startWorker({ config: { ...config, production: true }, logger: createLogger('silent') })).rejects.toThrow(/maxmemory-policy is allkeys-lru \(set `maxmemory-policy noeviction`\)/);
      const worker = await startWorker({ config, logger: createLogger('silent'), reconciler: false });
      await worker.close();
    } finally {
      await redis.stop();
    }
  });
});
