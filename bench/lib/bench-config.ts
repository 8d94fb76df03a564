import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../shared/config/config.js';

/**
 * A section's config on the bench's Redis: key and queue prefixes of its own (`<tag><random>`), so the
 * sections never see each other's runs, logs silent, and `env` on top.
 */
export function benchConfig(redisUrl: string, tag: string, env: Record<string, string> = {}): Config {
  const id = randomBytes(3).toString('hex');
  return loadConfig({
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `${tag}${id}`,
    AGENTQ_QUEUE_PREFIX: `${tag}q${id}`,
    AGENTQ_LOG_LEVEL: 'silent',
    ...env,
  });
}
