import { presentEnv, readArea } from './settings-area.js';
import { redisArea, type RedisConfig } from './settings/redis.js';

/**
 * Only the Redis settings (shared/config/settings/redis.ts), for a command that needs nothing else: the
 * CLI's read commands (`status`, `runs`, `steps`, …). Read without zod and without the other areas,
 * because loading them is a good part of a one-shot command's start (CLI cold start). Other
 * variables are not read, so a bad one (say AGENTQ_PRICES) does not stop `agentq status`; the worker and
 * the API still refuse it, with the same message for a bad Redis setting (the same declarations).
 */
export function readRedisConfig(env: NodeJS.ProcessEnv = process.env): RedisConfig {
  return readArea(redisArea, presentEnv(env));
}

/** The environment variables this part reads. */
export const REDIS_ENV_NAMES = Object.values(redisArea.settings).map((setting) => setting.env);

export { DEFAULT_REDIS_URL, type RedisConfig } from './settings/redis.js';
