import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiInstance } from '../../producer/api/create-api.js';
import { freePort, startPrivateRedis, type PrivateRedis } from '../../shared/redis/private-redis-server.js';
import { bearer, createTestApi, json, KEYS } from '../helpers/api-test-env.js';
import { eventually } from '../helpers/test-env.js';

/** Injects and measures how long the answer took. */
async function timed(app: ApiInstance, options: InjectOptions) {
  const started = performance.now();
  const response = await app.inject(options);
  return { response, ms: performance.now() - started };
}

const basic = `Basic ${Buffer.from(`admin:${KEYS.acmeAdmin}`).toString('base64')}`;

describe('HTTP API with Redis down', () => {
  it('answers 503 at once when nothing listens on the Redis port; /healthz still answers', async () => {
    const app = await createTestApi({ REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    try {
      for (const request of [
        { method: 'GET', url: '/v1/runs', headers: bearer(KEYS.acmeProducer) },
        { method: 'POST', url: '/v1/runs', headers: bearer(KEYS.acmeProducer), payload: { graph: 'chain', input: { steps: 1 } } },
        { method: 'GET', url: '/v1/runs/run_x/events', headers: bearer(KEYS.acmeProducer) },
        { method: 'GET', url: '/metrics', headers: bearer(KEYS.acmeAdmin) },
        { method: 'GET', url: '/admin/queues/api/queues', headers: { authorization: basic } },
        { method: 'GET', url: '/readyz' },
      ] satisfies InjectOptions[]) {
        const { response, ms } = await timed(app, request);
        expect(response.statusCode, `${request.method} ${request.url}`).toBe(503);
        expect(json(response)).toMatchObject({ error: { code: 'UNAVAILABLE', message: expect.stringContaining('Redis') } });
        expect(ms, `${request.method} ${request.url}`).toBeLessThan(1000);
      }
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  describe('a Redis that stops answering (SIGSTOP) keeps its sockets open', () => {
    let redis: PrivateRedis;
    let app: ApiInstance;
    beforeAll(async () => {
      redis = await startPrivateRedis();
      app = await createTestApi({ REDIS_URL: redis.url });
    });
    afterAll(async () => {
      redis?.process.kill('SIGCONT');
      await app?.close();
      await redis?.stop();
    });

    it('answers 503 within about a second (the command timeout), then recovers after SIGCONT', async () => {
      const created = await app.inject({ method: 'POST', url: '/v1/runs', headers: bearer(KEYS.acmeProducer), payload: { graph: 'chain', input: { steps: 1 } } });
      expect(created.statusCode).toBe(202);
      const runId = json(created).id as string;
      redis.process.kill('SIGSTOP');
      try {
        const timings: string[] = [];
        for (const request of [
          { method: 'GET', url: `/v1/runs/${runId}`, headers: bearer(KEYS.acmeProducer) },
          { method: 'POST', url: '/v1/runs', headers: bearer(KEYS.acmeProducer), payload: { graph: 'chain', input: { steps: 1 } } },
          { method: 'GET', url: '/readyz' },
          { method: 'GET', url: '/metrics', headers: bearer(KEYS.acmeAdmin) },
        ] satisfies InjectOptions[]) {
          const { response, ms } = await timed(app, request);
          timings.push(`${request.method} ${request.url.split('?')[0]} ${Math.round(ms)} ms`);
          expect(response.statusCode, `${request.method} ${request.url}`).toBe(503);
          expect(json(response)).toMatchObject({ error: { code: 'UNAVAILABLE' } });
          expect(ms, `${request.method} ${request.url}`).toBeLessThan(1500);
        }
        console.log(`503 with Redis stopped (AGENTQ_REDIS_COMMAND_TIMEOUT_MS=1000): ${timings.join(', ')}`);
      } finally {
        redis.process.kill('SIGCONT');
      }
      await eventually(async () => (await app.inject({ method: 'GET', url: `/v1/runs/${runId}`, headers: bearer(KEYS.acmeProducer) })).statusCode === 200, 10_000, 'the API to recover');
    });
  });
});
