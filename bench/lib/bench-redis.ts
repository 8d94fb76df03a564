import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrivateRedis } from '../../shared/redis/private-redis-server.js';

/**
 * The Redis a benchmark runs on: REDIS_URL when set, else a private redis-server with AOF on
 * (everysec), as production runs it, in a temporary folder removed by `close()`.
 */
export async function openBenchRedis(): Promise<{ url: string; description: string; close(): Promise<void> }> {
  if (process.env.REDIS_URL)
    return {
      url: process.env.REDIS_URL,
      description: `${process.env.REDIS_URL} (REDIS_URL)`,
      close: async () => undefined,
    };
  const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-'));
  const redis = await startPrivateRedis({ appendonly: true, dir });
  return {
    url: redis.url,
    description: `${redis.url} (private redis-server, AOF everysec)`,
    async close() {
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
