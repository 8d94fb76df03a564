import type { Redis } from 'ioredis';
import { AgentqError } from '../../shared/errors.js';

/**
 * Fails fast unless the connection is up: a connection still making its first attempt gets up to
 * `waitMs`; one that is reconnecting (Redis went away) fails at once, so "Redis down" answers 503
 * immediately instead of after a command timeout.
 */
export async function requireRedis(redis: Redis, waitMs = 500): Promise<void> {
  if (redis.status === 'ready') return;
  const unavailable = () => new AgentqError('UNAVAILABLE', `Redis is not reachable (connection ${redis.status}); try again shortly`, { retryable: true });
  if (!['wait', 'connecting', 'connect'].includes(redis.status)) throw unavailable();
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('reconnecting', onFailed);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => done();
    const onFailed = () => done(unavailable());
    const timer = setTimeout(onFailed, waitMs);
    redis.once('ready', onReady);
    redis.once('reconnecting', onFailed);
  });
}
