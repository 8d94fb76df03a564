import { Redis } from 'ioredis';
import { DEFAULT_REDIS_URL } from '../config/redis-config.js';
import { AgentqError } from '../contracts/errors.js';
import { redactCredentials } from '../contracts/redact-credentials.js';

/**
 * Resolves once Redis answers PING; throws UNAVAILABLE naming the URL and what to do when it does not
 * within `timeoutMs`. Workers reconnect forever once running (a Redis restart must not kill them), so
 * without this check a worker started with no Redis would wait in silence.
 */
export async function assertRedisReachable(url: string | undefined, timeoutMs = 3000): Promise<void> {
  const target = url ?? DEFAULT_REDIS_URL;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    const probe = new Redis(target, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
      connectTimeout: Math.max(100, deadline - Date.now()),
    });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      await probe.ping();
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      probe.disconnect();
    }
  }
  const reason = lastError instanceof Error ? lastError.message : String(lastError);
  throw new AgentqError(
    'UNAVAILABLE',
    `cannot reach Redis at ${redactCredentials(target)} within ${timeoutMs} ms (${reason}). Start Redis (\`npm start\` starts a private one) or set REDIS_URL to a Redis you run`,
    { retryable: true, cause: lastError },
  );
}
