import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentqQueueNames } from '../../producer/api/agentq-queue-names.js';
import { createApi } from '../../producer/api/create-api.js';
import { startApi } from '../../producer/api/start-api.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import {
  bearer,
  createTestApi,
  isErrorShape,
  json,
  KEY_TENANT,
  KEYS,
  startApiTestEnv,
  type ApiTestEnv,
} from '../helpers/api-test-env.js';
import { eventually, testConfig } from '../helpers/test-env.js';

const approval = defineGraph({ name: 'approval', state: { verdict: channel.replace('') }, output: (state) => state })
  .node('ask', (_state, context) => ({ verdict: String(context.interrupt<string>({ question: 'ok?' })) }))
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

const basic = (password: string) => ({
  authorization: `Basic ${Buffer.from(`someone:${password}`).toString('base64')}`,
});

/** Waits out the last seconds of a minute, so a test of per-minute limits stays inside one window. */
async function awayFromMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
}

describe('HTTP API: keys, roles and tenants', () => {
  let env: ApiTestEnv;
  const runsOf: Record<string, string[]> = { acme: [], globex: [] };

  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [approval] });
    // Runs of both tenants in several states: completed, failed, waiting.
    for (const [key, tenant] of [
      [KEYS.acmeProducer, 'acme'],
      [KEYS.globexProducer, 'globex'],
    ] as const) {
      for (const body of [
        { graph: 'chain', input: { steps: 1 } },
        { graph: 'chain', input: { steps: 'x' } },
        { graph: 'approval', input: null },
      ]) {
        const created = await env.as(key, { method: 'POST', url: '/v1/runs', payload: body });
        runsOf[tenant]!.push(json(created).id as string);
      }
    }
    for (const id of [...runsOf.acme!, ...runsOf.globex!]) {
      await eventually(async () => {
        const record = await env.client.get(id);
        return record && ['completed', 'failed', 'waiting'].includes(record.status);
      });
    }
  });
  afterAll(async () => env?.close());

  it('answers 401 without a key or with a wrong one, 403 for a producer key on admin routes; probes need no key', async () => {
    const none = await env.app.inject({ method: 'GET', url: '/v1/runs' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(json(none)).toEqual({
      error: { code: 'UNAUTHORIZED', message: 'missing API key: send "Authorization: Bearer <API key>"' },
    });
    const wrong = await env.app.inject({ method: 'GET', url: '/v1/runs', headers: bearer('not-a-key-of-ours-at-all') });
    expect(json(wrong)).toEqual({
      error: { code: 'UNAUTHORIZED', message: 'the API key is not valid; check it or ask for a new one' },
    });
    const scheme = await env.app.inject({
      method: 'GET',
      url: '/v1/runs',
      headers: { authorization: KEYS.acmeProducer },
    });
    expect(scheme.statusCode).toBe(401);
    expect(json(scheme).error).toMatchObject({ message: expect.stringContaining('Bearer <API key>') });
    const post = await env.app.inject({
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'chain', input: { steps: 1 } },
    });
    expect(post.statusCode).toBe(401);

    const metrics = await env.as(KEYS.acmeProducer, { method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(403);
    expect(json(metrics)).toEqual({
      error: { code: 'FORBIDDEN', message: 'this route needs a key with the admin role; yours has the producer role' },
    });
    expect((await env.as(KEYS.acmeAdmin, { method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    // An admin key is also a producer key.
    expect((await env.as(KEYS.acmeAdmin, { method: 'GET', url: '/v1/runs' })).statusCode).toBe(200);
    expect((await env.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await env.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it("another tenant's run answers 404 on every run route, exactly like a missing one, and is left untouched", async () => {
    const routes = [
      { method: 'GET', path: (id: string) => `/v1/runs/${id}` },
      { method: 'GET', path: (id: string) => `/v1/runs/${id}/messages` },
      { method: 'GET', path: (id: string) => `/v1/runs/${id}/steps` },
      { method: 'GET', path: (id: string) => `/v1/runs/${id}/events` },
      { method: 'DELETE', path: (id: string) => `/v1/runs/${id}` },
      { method: 'DELETE', path: (id: string) => `/v1/runs/${id}?purge=true` },
      { method: 'POST', path: (id: string) => `/v1/runs/${id}/retry` },
      { method: 'POST', path: (id: string) => `/v1/runs/${id}/resume`, payload: { value: 'yes' } },
    ] as const;
    const before = await Promise.all([...runsOf.acme!, ...runsOf.globex!].map((id) => env.client.get(id)));
    const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
    console.log(`cross-tenant property seed=${seed} (FC_SEED=${seed} reproduces it)`);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(KEYS.acmeProducer, KEYS.acmeAdmin, KEYS.globexProducer),
        fc.constantFrom(...routes),
        fc.nat(2),
        async (key, route, index) => {
          const ownTenant = KEY_TENANT[key]!;
          const foreignId = runsOf[ownTenant === 'acme' ? 'globex' : 'acme']![index]!;
          const missingId = `run_missing_${index}`;
          const ask = (id: string) =>
            env.as(key, {
              method: route.method,
              url: route.path(id),
              ...('payload' in route ? { payload: route.payload } : {}),
            });
          const [foreign, missing] = await Promise.all([ask(foreignId), ask(missingId)]);
          expect(foreign.statusCode).toBe(404);
          expect(missing.statusCode).toBe(404);
          expect(foreign.body.replaceAll(foreignId, '<id>')).toBe(missing.body.replaceAll(missingId, '<id>'));
          expect(foreign.headers['content-type']).toBe(missing.headers['content-type']);
        },
      ),
      { seed, numRuns: 300 },
    );
    const after = await Promise.all([...runsOf.acme!, ...runsOf.globex!].map((id) => env.client.get(id)));
    expect(after).toEqual(before);
    // The owners still reach them.
    expect((await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${runsOf.acme![0]}` })).statusCode).toBe(
      200,
    );
    expect(
      (await env.as(KEYS.globexProducer, { method: 'GET', url: `/v1/runs/${runsOf.globex![0]}` })).statusCode,
    ).toBe(200);
  });

  it('limits requests per key per minute across API processes (429 with Retry-After), shared through Redis', async () => {
    await awayFromMinuteEdge();
    const config = testConfig({
      AGENTQ_API_KEYS: `${KEYS.acmeProducer}:acme:producer,${KEYS.globexProducer}:globex:producer`,
      AGENTQ_RATE_LIMIT_PER_MINUTE: '5',
    });
    const [one, two] = await Promise.all([
      createApi({ config, logger: createLogger('silent') }),
      createApi({ config, logger: createLogger('silent') }),
    ]);
    try {
      const statuses: number[] = [];
      for (let index = 0; index < 6; index += 1) {
        const app = index % 2 === 0 ? one : two;
        statuses.push(
          (await app.inject({ method: 'GET', url: '/v1/runs', headers: bearer(KEYS.acmeProducer) })).statusCode,
        );
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      const refused = await one.inject({ method: 'GET', url: '/v1/runs', headers: bearer(KEYS.acmeProducer) });
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(json(refused)).toMatchObject({
        error: { code: 'RATE_LIMITED', message: expect.stringContaining('AGENTQ_RATE_LIMIT_PER_MINUTE') },
      });
      // Another key has its own budget.
      expect(
        (await two.inject({ method: 'GET', url: '/v1/runs', headers: bearer(KEYS.globexProducer) })).statusCode,
      ).toBe(200);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('caps runs in flight per tenant (429 with Retry-After); a finished or cancelled run frees its slot', async () => {
    const capped = await startApiTestEnv({ env: { AGENTQ_TENANT_MAX_INFLIGHT: '2' } });
    try {
      const enqueue = (key: string, body: object, headers: Record<string, string> = {}) =>
        capped.as(key, { method: 'POST', url: '/v1/runs', payload: body, headers });
      const slow = { graph: 'chain', input: { steps: 1, sleepMs: 20_000 } };
      const first = await enqueue(KEYS.acmeProducer, slow, { 'idempotency-key': 'slot-1' });
      const second = await enqueue(KEYS.acmeProducer, { graph: 'chain', input: { steps: 1, sleepMs: 300 } });
      expect([first.statusCode, second.statusCode]).toEqual([202, 202]);
      const third = await enqueue(KEYS.acmeProducer, slow);
      expect(third.statusCode).toBe(429);
      expect(third.headers['retry-after']).toBe('2');
      expect(json(third)).toMatchObject({
        error: { code: 'RATE_LIMITED', message: expect.stringContaining('AGENTQ_TENANT_MAX_INFLIGHT') },
      });
      // A replay of a run that holds a slot is not refused; another tenant has its own cap.
      expect((await enqueue(KEYS.acmeProducer, slow, { 'idempotency-key': 'slot-1' })).statusCode).toBe(202);
      expect((await enqueue(KEYS.globexProducer, { graph: 'chain', input: { steps: 1 } })).statusCode).toBe(202);
      // The worker finishing the second run frees a slot.
      await capped.client.wait(json(second).id as string);
      const fourth = await enqueue(KEYS.acmeProducer, slow);
      expect(fourth.statusCode).toBe(202);
      expect((await enqueue(KEYS.acmeProducer, slow)).statusCode).toBe(429);
      // Cancelling through the API frees one too.
      await capped.as(KEYS.acmeProducer, { method: 'DELETE', url: `/v1/runs/${json(first).id}` });
      await capped.client.wait(json(first).id as string);
      await eventually(
        async () => (await enqueue(KEYS.acmeProducer, { graph: 'chain', input: { steps: 1 } })).statusCode === 202,
        5000,
        'a freed slot',
      );
      await capped.as(KEYS.acmeProducer, { method: 'DELETE', url: `/v1/runs/${json(fourth).id}` });
    } finally {
      await capped.close();
    }
  });

  it('runs open without keys: the default tenant as admin, listening on loopback only, with a warning', async () => {
    const open = await createTestApi({ AGENTQ_API_KEYS: '' });
    try {
      const answer = await open.inject({ method: 'GET', url: '/v1/runs' });
      expect(answer.statusCode).toBe(200);
      expect((await open.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
      expect((await open.inject({ method: 'GET', url: '/admin/queues/api/queues' })).statusCode).toBe(200);
    } finally {
      await open.close();
    }
    const lines: string[] = [];
    const logger = pino(
      { level: 'info' },
      new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }),
    );
    const api = await startApi({ config: testConfig({ HOST: '0.0.0.0', AGENTQ_API_KEYS: '' }), logger, port: 0 });
    try {
      expect(api.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const warning = lines
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .find((line) => line.level === 40);
      expect(warning?.msg).toMatch(/no API keys configured.*open.*loopback only/);
      expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('reads keys from AGENTQ_API_KEYS_FILE and refuses bad entries with a message that names the entry, not the key', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'agentq-keys-'));
    const file = join(directory, 'keys');
    writeFileSync(
      file,
      `# agentq keys\n${KEYS.acmeProducer}:acme:producer\n\n${KEYS.globexProducer}:globex:producer,${KEYS.acmeAdmin}:acme:admin\n`,
    );
    const app = await createTestApi({ AGENTQ_API_KEYS: '', AGENTQ_API_KEYS_FILE: file });
    try {
      const answer = await app.inject({ method: 'GET', url: '/v1/runs', headers: bearer(KEYS.globexProducer) });
      expect(answer.statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/v1/runs' })).statusCode).toBe(401);
    } finally {
      await app.close();
    }
    writeFileSync(file, `${KEYS.acmeProducer}:acme:producer\nshort-secret:acme:producer\n`);
    await expect(createTestApi({ AGENTQ_API_KEYS: '', AGENTQ_API_KEYS_FILE: file })).rejects.toThrow(
      /entry 2: the key is shorter than 16 characters/,
    );
    await expect(createTestApi({ AGENTQ_API_KEYS: `${KEYS.acmeProducer}:acme:owner` })).rejects.toThrow(
      /AGENTQ_API_KEYS, entry 1: role 'owner' must be producer or admin/,
    );
  });

  describe('the dashboard at /admin/queues', () => {
    it('sends a browser without credentials to the sign-in form, and scripts get 401 with a Basic challenge', async () => {
      const browser = await env.app.inject({ method: 'GET', url: '/admin/queues', headers: { accept: 'text/html' } });
      expect(browser.statusCode).toBe(303);
      expect(browser.headers.location).toBe('/admin/login?next=%2Fadmin%2Fqueues');
      const form = await env.app.inject({ method: 'GET', url: '/admin/login?next=%2Fadmin%2Fqueues' });
      expect(form.statusCode).toBe(200);
      expect(form.body).toContain('<form method="post" action="/admin/login">');
      const script = await env.app.inject({ method: 'GET', url: '/admin/queues/api/queues' });
      expect(script.statusCode).toBe(401);
      expect(script.headers['www-authenticate']).toMatch(/^Basic realm="agentq dashboard"/);
      expect(isErrorShape(json(script))).toBe(true);
    });

    it('admits the admin key only: Basic auth, Bearer, or a sign-in that sets an HttpOnly session cookie', async () => {
      expect(
        (await env.app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: basic(KEYS.acmeProducer) }))
          .statusCode,
      ).toBe(403);
      expect(
        (
          await env.app.inject({
            method: 'GET',
            url: '/admin/queues/api/queues',
            headers: basic('wrong-key-wrong-key'),
          })
        ).statusCode,
      ).toBe(401);
      const viaBasic = await env.app.inject({
        method: 'GET',
        url: '/admin/queues/api/queues',
        headers: basic(KEYS.acmeAdmin),
      });
      expect(viaBasic.statusCode).toBe(200);
      const names = (json(viaBasic).queues as { name: string }[]).map((queue) => queue.name).sort();
      expect(names).toEqual([...agentqQueueNames()].sort());
      expect(names).toEqual(expect.arrayContaining(['agentq-runs', 'agentq-steps', 'agentq-webhooks']));
      expect((await env.as(KEYS.acmeAdmin, { method: 'GET', url: '/admin/queues/api/queues' })).statusCode).toBe(200);

      const login = (key: string, next = '/admin/queues') =>
        env.app.inject({
          method: 'POST',
          url: '/admin/login',
          payload: new URLSearchParams({ key, next }).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
      const refused = await login('wrong-key-wrong-key');
      expect(refused.statusCode).toBe(401);
      expect(refused.body).toContain('That key is not valid.');
      expect((await login(KEYS.acmeProducer)).statusCode).toBe(403);
      const signedIn = await login(KEYS.acmeAdmin);
      expect(signedIn.statusCode).toBe(303);
      expect(signedIn.headers.location).toBe('/admin/queues');
      const cookie = String(signedIn.headers['set-cookie']);
      expect(cookie).toMatch(/^agentq_session=[A-Za-z0-9_-]{43}; Path=\/admin; HttpOnly; SameSite=Strict; Max-Age=\d+/);
      const session = cookie.split(';')[0]!;
      const page = await env.app.inject({
        method: 'GET',
        url: '/admin/queues',
        headers: { cookie: session, accept: 'text/html' },
      });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('agentq');
      expect(
        (await env.app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: { cookie: session } }))
          .statusCode,
      ).toBe(200);
      // Only dashboard paths as the place to go after signing in.
      expect((await login(KEYS.acmeAdmin, '//evil.example/admin/queues')).headers.location).toBe('/admin/queues');
      // Signing out ends the session everywhere (it lives in Redis).
      // Signing out is a POST with the session's CSRF token (its GET shows the button).
      const signOut = await env.app.inject({ method: 'GET', url: '/admin/logout', headers: { cookie: session } });
      const csrf = /name="_csrf" value="([^"]+)"/.exec(signOut.body)![1]!;
      const out = await env.app.inject({
        method: 'POST',
        url: '/admin/logout',
        payload: `_csrf=${csrf}`,
        headers: { cookie: session, 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(out.statusCode).toBe(303);
      expect(
        (await env.app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: { cookie: session } }))
          .statusCode,
      ).toBe(401);
    });

    it('is read-only unless AGENTQ_DASHBOARD_WRITE=true', async () => {
      const pause = {
        method: 'PUT' as const,
        url: '/admin/queues/api/queues/agentq-runs/pause',
        headers: basic(KEYS.acmeAdmin),
      };
      const readOnly = await env.app.inject(pause);
      expect(readOnly.statusCode).toBe(403);
      expect(json(readOnly)).toEqual({
        error: { code: 'FORBIDDEN', message: expect.stringContaining('AGENTQ_DASHBOARD_WRITE=true') },
      });
      const writable = await createTestApi({ AGENTQ_DASHBOARD_WRITE: 'true' });
      try {
        const paused = await writable.inject(pause);
        expect(paused.statusCode).toBeLessThan(300);
        const queues = json<{ queues: { name: string; isPaused: boolean; readOnlyMode: boolean }[] }>(
          await writable.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: basic(KEYS.acmeAdmin) }),
        ).queues;
        expect(queues.find((queue) => queue.name === 'agentq-runs')).toMatchObject({
          isPaused: true,
          readOnlyMode: false,
        });
      } finally {
        await writable.close();
      }
    });
  });

  it('keeps the run record shape for the owner while a foreign tenant sees nothing in its list', async () => {
    const listed = json<{ runs: RunRecord[] }>(
      await env.as(KEYS.globexProducer, { method: 'GET', url: '/v1/runs?limit=200' }),
    ).runs.map((run) => run.id);
    expect(listed.sort()).toEqual([...runsOf.globex!].sort());
  });
});
