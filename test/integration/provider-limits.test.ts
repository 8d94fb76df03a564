import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keys } from '../../shared/store/keys.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { ProviderRateLimiter, type AcquireResult } from '../../shared/operations/limits/provider-rate-limiter.js';
import type { ProviderLimits } from '../../shared/llm/rate-limit-table.js';
import { startWorker, type AgentWorker } from '../../worker/start-worker.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { maxInAnyWindow } from '../helpers/max-in-any-window.js';

/** The limiter itself, recording when it granted each slot (Redis time, from the ticket). */
class RecordingRateLimiter extends ProviderRateLimiter {
  readonly granted: number[] = [];
  override async acquire(
    provider: string,
    model: string,
    limits: ProviderLimits,
    tokens: number,
  ): Promise<AcquireResult> {
    const result = await super.acquire(provider, model, limits, tokens);
    if (result.granted) this.granted.push(Number(result.ticket.split(':')[0]));
    return result;
  }
}

/**
 * Two workers, one provider budget: every model request goes through the real path (model node →
 * callLanguageModel → limiter → openai SDK → scripted server). A 2-second window stands in for the
 * minute (the same Lua script, 30× faster); AGENTQ_RATE_LIMITS gives 60 requests per window.
 */
describe('provider limits shared by all workers, through callLanguageModel', () => {
  const WINDOW_MS = 2000;
  const LIMIT = 60;
  const RUNS = 150;
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let second: AgentWorker;
  const connections: Redis[] = [];
  const limiters: RecordingRateLimiter[] = [];

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ script: () => ({ content: 'ok' }) });
    // Not streamed: the scripted server shares this process's event loop with both workers, and on a
    // loaded machine the extra work of streamed answers delayed its receipt times into bursts (61–78
    // per window while the limiter granted ≤ 60). What is tested here is the limiter, not streaming.
    const env_ = {
      OPENAI_BASE_URL: server.url,
      LLM_MODEL: 'scripted-chat',
      AGENTQ_RATE_LIMITS: `scripted-chat:${LIMIT}:0`,
      AGENTQ_LLM_STREAM: 'false',
    };
    env = await startTestEnv({ env: env_, concurrency: 16 });
    const makeLimiter = () => {
      const connection = new Redis(env.config.redisUrl!, { maxRetriesPerRequest: null });
      connections.push(connection);
      const limiter = new RecordingRateLimiter(connection, new Keys(env.config.keyPrefix), WINDOW_MS);
      limiters.push(limiter);
      return limiter;
    };
    // The first worker (from startTestEnv) is replaced by one with a recording limiter; both share Redis.
    await env.worker.close();
    env.worker = await startWorker({
      config: env.config,
      logger: createLogger('silent'),
      reconciler: false,
      concurrency: 16,
      services: { rateLimiter: makeLimiter() },
    });
    second = await startWorker({
      config: env.config,
      logger: createLogger('silent'),
      reconciler: false,
      concurrency: 16,
      services: { rateLimiter: makeLimiter() },
    });
  });
  afterAll(async () => {
    await second?.close();
    await env?.close();
    await server?.close();
    connections.forEach((connection) => connection.disconnect());
  });

  it(`two workers sharing ${LIMIT} requests per window never exceed it in any window`, async () => {
    // The server shares this process's event loop with both workers: a request sent before a stall of the
    // loop is received after it, so receipts bunch by up to the longest stall. Measured, to allow for it.
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    const started = Date.now();
    const queued = await Promise.all(
      Array.from({ length: RUNS }, (_, index) =>
        env.client.enqueue({ graph: 'react-agent', input: { query: `question ${index}`, tools: [] } }),
      ),
    );
    const done = await Promise.all(queued.map((run) => env.client.wait(run.id, { timeoutMs: 50_000 })));
    expect(done.filter((run) => run.status === 'completed')).toHaveLength(RUNS);

    const granted = limiters.flatMap((limiter) => limiter.granted);
    expect(granted).toHaveLength(RUNS);
    // Both workers took slots from the one shared budget.
    expect(limiters.every((limiter) => limiter.granted.length > 0)).toBe(true);
    expect(maxInAnyWindow(granted, WINDOW_MS)).toBeLessThanOrEqual(LIMIT);
    // What the provider sees: the requests the server received, in any window of its own clock shortened by
    // the longest stall of the loop they shared (a request's receipt lags its sending by up to that much).
    stalls.disable();
    const stallMs = Math.ceil(stalls.max / 1e6);
    expect(server.chatRequests()).toHaveLength(RUNS);
    expect(
      maxInAnyWindow(
        server.chatRequests().map((request) => request.receivedAt),
        Math.max(1, WINDOW_MS - stallMs),
      ),
    ).toBeLessThanOrEqual(LIMIT);
    // 150 requests at 60 per window need at least two full windows.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * WINDOW_MS);

    // Refused steps were parked, not failed: no attempt was spent.
    const steps = (await Promise.all(done.map((run) => env.client.steps(run.id)))).flat();
    expect(steps.every((step) => step.attempts === 1)).toBe(true);
    const events = (await Promise.all(done.map((run) => env.client.store.eventLog.events(run.id)))).flat();
    const parked = events.filter((event) => event.type === 'step-retry');
    expect(parked.length).toBeGreaterThan(0);
    expect(parked[0]!.data).toMatchObject({
      parkedMs: expect.any(Number),
      error: { code: 'RATE_LIMITED', retryable: true },
    });
  });
});
