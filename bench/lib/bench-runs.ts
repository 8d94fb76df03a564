/** Small pieces the capacity and recovery sections and the soak share. */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { AgentClient, EnqueueRequest } from '../../producer/client/agent-client.js';

/**
 * Worker and client environment: this Redis, key and queue prefixes of their own, quiet logs, no tracing,
 * and no in-flight cap (the capacity section holds 10,000 runs in flight through the client library,
 * which the admission now holds to AGENTQ_TENANT_MAX_INFLIGHT like every producer).
 */
export function benchEnv(redisUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  const id = randomBytes(3).toString('hex');
  return {
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `bench${id}`,
    AGENTQ_QUEUE_PREFIX: `benchq${id}`,
    AGENTQ_LOG_LEVEL: 'error',
    OTEL_TRACES_EXPORTER: 'none',
    AGENTQ_TENANT_MAX_INFLIGHT: '0',
    ...extra,
  };
}

/** Enqueues `count` runs, at most 200 requests at a time; → their ids in order. */
export async function enqueueAll(
  client: AgentClient,
  count: number,
  request: (index: number) => EnqueueRequest,
): Promise<string[]> {
  const ids: string[] = [];
  for (let from = 0; from < count; from += 200) {
    const batch = Array.from({ length: Math.min(200, count - from) }, (_, offset) =>
      client.enqueue(request(from + offset)),
    );
    for (const run of await Promise.all(batch)) ids.push(run.id);
  }
  return ids;
}

/** Redis INFO memory `used_memory`, bytes. */
export async function usedMemory(redis: Redis): Promise<number> {
  const match = /^used_memory:(\d+)/m.exec(await redis.info('memory'));
  if (!match) throw new Error('INFO memory has no used_memory line');
  return Number(match[1]);
}

/**
 * Polls `check` every 250 ms until it holds; logs `progress()` every 10 s; throws after `timeoutMs`
 * (a benchmark that hangs must say what it was waiting for).
 */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  log: (line: string) => void,
  progress?: () => string,
): Promise<void> {
  const began = Date.now();
  let lastLog = began;
  while (!(await check())) {
    if (Date.now() - began > timeoutMs)
      throw new Error(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${progress ? ` (${progress()})` : ''}`,
      );
    if (progress && Date.now() - lastLog >= 10_000) {
      lastLog = Date.now();
      log(`  … ${progress()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
