import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { startPrivateRedis, type PrivateRedis } from '../../shared/redis/private-redis-server.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { testConfig } from '../helpers/test-env.js';

const SCENARIO = 'production config guard';

/** A private Redis with AOF as given and, optionally, an evicting maxmemory-policy. */
async function unsafeRedis({ appendonly, policy }: { appendonly: boolean; policy?: string }): Promise<PrivateRedis> {
  const redis = await startPrivateRedis({ appendonly });
  if (policy) {
    const admin = new Redis(redis.url);
    await admin.config('SET', 'maxmemory-policy', policy);
    admin.disconnect();
  }
  return redis;
}

/**
 * Scenario 7 of the fault suite: with NODE_ENV=production a worker refuses a Redis that would lose
 * runs — AOF off (a restart loses everything since the last snapshot) or an evicting
 * maxmemory-policy (an evicted run key is a lost run) — with a message naming the setting to change;
 * in development it only warns. Checked both in-process and on the real `agentq worker` command.
 */
describe('fault suite: production Redis config guard', () => {
  it('refuses to start with NODE_ENV=production on a Redis with AOF off, naming the setting', async () => {
    const redis = await unsafeRedis({ appendonly: false });
    try {
      const config = { ...testConfig(), redisUrl: redis.url, production: true };
      await expect(startWorker({ config, logger: createLogger('silent') })).rejects.toThrow(
        /appendonly is off \(set `appendonly yes`/,
      );
    } finally {
      await redis.stop();
    }
  });

  it('refuses an evicting maxmemory-policy in production, and only warns in development', async () => {
    const redis = await unsafeRedis({ appendonly: true, policy: 'allkeys-lru' });
    try {
      const config = { ...testConfig(), redisUrl: redis.url };
      await expect(
        startWorker({ config: { ...config, production: true }, logger: createLogger('silent') }),
      ).rejects.toThrow(/maxmemory-policy is allkeys-lru \(set `maxmemory-policy noeviction`\)/);
      // BullMQ prints its own "IMPORTANT! Eviction policy is …" with console.warn once per connection
      // (about ten): expected here, so caught and checked instead of flooding the test run's stderr.
      const bullmqWarnings = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
      try {
        const worker = await startWorker({ config, logger: createLogger('silent'), reconciler: false });
        await worker.close();
        expect(bullmqWarnings.mock.calls.map(([line]) => String(line))).toContain(
          'IMPORTANT! Eviction policy is allkeys-lru. It should be "noeviction"',
        );
      } finally {
        bullmqWarnings.mockRestore();
      }
    } finally {
      await redis.stop();
    }
  });

  it.each([
    { setting: 'appendonly', redis: { appendonly: false }, message: /appendonly is off \(set `appendonly yes`/ },
    {
      setting: 'maxmemory-policy',
      redis: { appendonly: true, policy: 'volatile-lru' },
      message: /maxmemory-policy is volatile-lru \(set `maxmemory-policy noeviction`\)/,
    },
  ])(
    '`agentq worker` with NODE_ENV=production exits at start on an unsafe $setting, saying what to set',
    async ({ setting, redis: options, message }) => {
      const redis = await unsafeRedis(options);
      try {
        const result = await runCli(['worker'], {
          ...cliEnv(testConfig({ REDIS_URL: redis.url })),
          NODE_ENV: 'production',
          AGENTQ_LOG_LEVEL: 'silent',
        });
        const said =
          result.stderr.match(message)?.[0] ?? `no message naming ${setting}: ${result.stderr.trim().slice(0, 120)}`;
        recordFigure({
          scenario: SCENARIO,
          name: `worker_start_with_unsafe_${setting}`,
          value: `exit ${result.code}: ${said}`,
          goal: `refused, naming ${setting}`,
        });
        expect(result.code).not.toBe(0);
        expect(result.stderr).toMatch(message);
        expect(result.stderr).toMatch(/Refusing to start with NODE_ENV=production/);
      } finally {
        await redis.stop();
      }
    },
  );
});
