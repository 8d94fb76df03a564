import type { InjectOptions } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApiInstance } from '../../producer/api/create-api.js';
import { bearer, createTestApi, KEYS } from '../helpers/api-test-env.js';

const LIMIT = 20;

/** Waits out the last seconds of a minute, so a test of per-minute limits stays inside one window. */
async function awayFromMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
}

/**
 * Guessing keys around the per-address count of failed authentications: one wrong credential from ever
 * new addresses, and a peer that claims a new client address in X-Forwarded-For with every guess. (The
 * per-address attack itself, and the owner's key still accepted, are in web-attacks.test.ts.)
 */
describe('the failed-authentication throttle counts the credential and the connection too', () => {
  const apps: ApiInstance[] = [];
  const api = async (env: Record<string, string> = {}) => {
    const app = await createTestApi(env);
    apps.push(app);
    return app;
  };
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });
  let plain: ApiInstance | undefined;
  const inject = async (options: InjectOptions, app?: ApiInstance) => (app ?? (plain ??= await api())).inject(options);

  it('one wrong credential tried from ever new addresses is throttled by itself', async () => {
    await awayFromMinuteEdge();
    const statuses: number[] = [];
    for (let index = 0; index <= LIMIT; index += 1) {
      const answer = await inject({
        method: 'GET',
        url: '/v1/runs',
        headers: bearer('the-same-stolen-looking-key-42'),
        remoteAddress: `198.51.100.${100 + index}`,
      });
      statuses.push(answer.statusCode);
    }
    expect(statuses.slice(0, LIMIT).every((status) => status === 401)).toBe(true);
    expect(statuses[LIMIT]).toBe(429);
  });

  it('AGENTQ_TRUST_PROXY=true (read as one hop): a peer rotating X-Forwarded-For is throttled by its own connection', async () => {
    await awayFromMinuteEdge();
    const trusting = await api({ AGENTQ_TRUST_PROXY: 'true' });
    const statuses = new Map<number, number>();
    // Each guess claims a new client address; the per-connection count (10× the limit) still stops them.
    const guesses = LIMIT * 10 + 5;
    for (let index = 0; index < guesses; index += 1) {
      const answer = await inject(
        {
          method: 'GET',
          url: '/v1/runs',
          headers: {
            ...bearer(`rotating-guess-${index}-0123456`),
            'x-forwarded-for': `192.0.2.${index % 250}, 198.18.${index >> 8}.${index % 256}`,
          },
          remoteAddress: '203.0.113.50',
        },
        trusting,
      );
      statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 401: LIMIT * 10, 429: 5 });
    // The owner's key through the same peer is accepted.
    const owner = await inject(
      {
        method: 'GET',
        url: '/v1/runs',
        headers: { ...bearer(KEYS.acmeProducer), 'x-forwarded-for': '198.18.200.1' },
        remoteAddress: '203.0.113.50',
      },
      trusting,
    );
    expect(owner.statusCode).toBe(200);
  });
});
