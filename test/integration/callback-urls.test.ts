import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signCallbackToken, verifyCallbackToken } from '../../shared/store/events/callback-token.js';
import type { ApiTestEnv } from '../helpers/api-test-env.js';
import { callbackGraph } from '../helpers/callback-graph.js';
import { startListeningApiEnv } from '../helpers/listening-api.js';
import { eventually } from '../helpers/test-env.js';

const SECRET = 'callback-secret-for-tests-0123456789abcdef';

/** The URLs each run's node handed out, in order (a woken step hands its URL out again). */
const handed = new Map<string, string[]>();

describe('signed callback URLs (context.callback, POST /v1/callbacks/:token)', () => {
  let env: ApiTestEnv;
  let base: string;
  beforeAll(async () => {
    ({ env, base } = await startListeningApiEnv((address) => ({
      graphs: [callbackGraph((runId, url) => handed.set(runId, [...(handed.get(runId) ?? []), url]))],
      env: { AGENTQ_CALLBACK_SECRET: SECRET, AGENTQ_PUBLIC_URL: `${address}/` },
    })));
  });
  afterAll(async () => env.close());

  /** A POST with no API key, over HTTP. */
  const post = (url: string, body: unknown) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  async function parkedUrl(runId: string): Promise<string> {
    await eventually(async () =>
      (await env.client.store.eventLog.events(runId)).some((event) => event.type === 'step-parked'),
    );
    return handed.get(runId)![0]!;
  }

  it('a POST without an API key resumes the run with its body; a second POST is refused and changes nothing', async () => {
    const queued = await env.client.enqueue({ graph: 'callbacker', input: { timeoutMs: 60_000 } });
    const url = await parkedUrl(queued.id);
    expect(url.startsWith(`${base}/v1/callbacks/`)).toBe(true);
    const events = await env.client.store.eventLog.events(queued.id);
    const parked = events.find((event) => event.type === 'step-parked')!;
    expect((parked.data as { waitingOn: unknown }).waitingOn).toEqual({ callback: { until: expect.any(String) } });

    const first = await post(url, { approved: true, by: 'ann' });
    expect(first.status).toBe(202);
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ body: { approved: true, by: 'ann' } });
    // The woken step handed out the same URL again.
    expect(handed.get(queued.id)).toEqual([url, url]);

    const second = await post(url, { approved: false });
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('CALLBACK_USED');
    expect((await env.client.get(queued.id))?.output).toEqual({ body: { approved: true, by: 'ann' } });
  });

  it('a tampered token (one character flipped, or re-signed with another secret) is refused as invalid', async () => {
    const queued = await env.client.enqueue({ graph: 'callbacker', input: { timeoutMs: 60_000 } });
    const url = await parkedUrl(queued.id);
    const token = url.slice(url.lastIndexOf('/') + 1);
    const flipAt = token.length - 3;
    const flipped = token.slice(0, flipAt) + (token[flipAt] === 'A' ? 'B' : 'A') + token.slice(flipAt + 1);
    const forged = signCallbackToken(verifyCallbackToken(token, SECRET), 'another-secret-0123456789abcdefghijkl');
    for (const bad of [flipped, forged]) {
      const answer = await post(`${base}/v1/callbacks/${bad}`, { approved: true });
      expect(answer.status).toBe(401);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('CALLBACK_INVALID');
    }
    // Nothing changed: the run still waits, and the real URL still works.
    expect((await env.client.get(queued.id))?.status).toBe('running');
    expect((await post(url, { ok: 1 })).status).toBe(202);
    expect((await env.client.wait(queued.id)).output).toEqual({ body: { ok: 1 } });
  });

  it('an expired URL is refused as expired, and the node sees its timeout', async () => {
    const queued = await env.client.enqueue({ graph: 'callbacker', input: { timeoutMs: 300 } });
    const done = await env.client.wait(queued.id);
    expect(done.output).toBe('timed out');
    const answer = await post(handed.get(queued.id)![0]!, { late: true });
    expect(answer.status).toBe(410);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('CALLBACK_EXPIRED');
    expect((await env.client.get(queued.id))?.output).toBe('timed out');
  });

  it('a cancelled run takes no callback', async () => {
    const queued = await env.client.enqueue({ graph: 'callbacker', input: { timeoutMs: 60_000 } });
    const url = await parkedUrl(queued.id);
    expect((await env.client.cancel(queued.id)).status).toBe('cancelled');
    const answer = await post(url, { late: true });
    expect(answer.status).toBe(409);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('CONFLICT');
    expect((await env.client.get(queued.id))?.status).toBe('cancelled');
  });
});
