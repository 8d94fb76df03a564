import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiInstance } from '../../producer/api/create-api.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { bearer, createTestApi, json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { atScale } from '../helpers/suite-scale.js';
import { eventually } from '../helpers/test-env.js';

/**
 * The holes an outside probe found in the pages, each as the attack and the
 * answer it must get. The API is reached as `agentq.test:8080`; "another port of the same host" is
 * `agentq.test:9999` (same site, other origin), "another site" is `evil.example`.
 */
const HOST = 'agentq.test:8080';
const OWN = `http://${HOST}`;
const OTHER_PORT = 'http://agentq.test:9999';
const FORM = 'application/x-www-form-urlencoded';
/** Wrong keys one address sends in the throttling attack (the probe sent 1,500). */
const WRONG_KEYS = atScale(120, 1500);
const LIMIT = 20;

const approval = defineGraph({ name: 'approval', state: { verdict: channel.replace('') } })
  .node('ask', (_state, context) => ({ verdict: String(context.interrupt<string>({ question: 'ok?' })) }))
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

/** Waits out the last seconds of a minute, so a test of per-minute limits stays inside one window. */
async function awayFromMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
}

/** A browser session: its cookie and its CSRF token (read from a page, as the browser has it). */
interface Session {
  cookie: string;
  csrf: string;
}

describe('attacks on the pages and their answers', () => {
  let env: ApiTestEnv;
  const apps: ApiInstance[] = [];
  const inject = (options: InjectOptions, app?: ApiInstance) =>
    (app ?? env.app).inject({ ...options, headers: { host: HOST, ...(options.headers ?? {}) } });
  const form = (url: string, fields: Record<string, string>, headers: Record<string, string>, app?: ApiInstance) =>
    inject(
      {
        method: 'POST',
        url,
        payload: new URLSearchParams(fields).toString(),
        headers: { 'content-type': FORM, ...headers },
      },
      app,
    );
  const api = async (env: Record<string, string>) => {
    const app = await createTestApi(env);
    apps.push(app);
    return app;
  };

  async function signIn(key: string, door = '/runs/login'): Promise<Session> {
    const response = await form(door, { key }, { 'sec-fetch-site': 'same-origin', origin: OWN });
    expect(response.statusCode, response.body).toBe(303);
    const cookie = [response.headers['set-cookie']]
      .flat()
      .map((header) => String(header).split(';')[0]!)
      .join('; ');
    // The token as the browser has it: in the page's forms (the runs list's sign-out button).
    const page = await inject({ method: 'GET', url: '/runs', headers: { cookie } });
    return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? 'none-on-the-page' };
  }
  const startRun = async (graph: string, input: unknown) =>
    json(await env.as(KEYS.acmeProducer, { method: 'POST', url: '/v1/runs', payload: { graph, input } })).id as string;
  const status = async (runId: string) => (await env.client.get(runId))?.status;

  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [approval], env: { AGENTQ_RATE_LIMIT_PER_MINUTE: '0' } });
    expect((await env.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await env?.close();
  });

  it("a form on another port of the same host cannot cancel, retry or resume a signed-in user's run: 403, the run is untouched", async () => {
    const session = await signIn(KEYS.acmeProducer);
    const running = await startRun('chain', { steps: 1, sleepMs: 60_000 });
    const waiting = await startRun('approval', null);
    await eventually(async () => (await status(running)) === 'running' && (await status(waiting)) === 'waiting');
    const cookies = { cookie: session.cookie };
    // The browser says same-site (another port), or only sends the other port's Origin: both are refused.
    const otherPort: Record<string, string>[] = [
      { 'sec-fetch-site': 'same-site', origin: OTHER_PORT },
      { origin: OTHER_PORT },
    ];
    for (const foreign of otherPort) {
      for (const [url, fields] of [
        [`/runs/${running}/cancel`, {}],
        [`/runs/${running}/retry`, {}],
        [`/runs/${waiting}/resume`, { value: 'yes' }],
      ] as const) {
        const answer = await form(url, { _csrf: session.csrf, ...fields }, { ...cookies, ...foreign });
        expect(answer.statusCode, `${url} ${JSON.stringify(foreign)}`).toBe(403);
        expect(json(answer).error).toMatchObject({
          code: 'FORBIDDEN',
          message: expect.stringContaining('another origin'),
        });
      }
    }
    expect(await status(running)).toBe('running');
    expect(await status(waiting)).toBe('waiting');
    // The page's own form (same origin, the session's token) still works.
    const own = await form(
      `/runs/${running}/cancel`,
      { _csrf: session.csrf },
      { ...cookies, 'sec-fetch-site': 'same-origin', origin: OWN },
    );
    expect(own.statusCode).toBe(303);
    await eventually(async () => (await status(running)) === 'cancelled');
  });

  it("a same-origin post of a session without its CSRF token, or with another session's, is refused: 403", async () => {
    const session = await signIn(KEYS.acmeProducer);
    const other = await signIn(KEYS.acmeProducer);
    const running = await startRun('chain', { steps: 1, sleepMs: 60_000 });
    const headers = { cookie: session.cookie, origin: OWN };
    const forged: Record<string, string>[] = [{}, { _csrf: 'forged' }, { _csrf: other.csrf }];
    for (const fields of forged) {
      const answer = await form(`/runs/${running}/cancel`, fields, headers);
      expect(answer.statusCode, JSON.stringify(fields)).toBe(403);
      expect(json<{ error: { message: string } }>(answer).error.message).toContain('_csrf');
    }
    expect(await status(running)).not.toMatch(/cancel/);
    expect((await form(`/runs/${running}/cancel`, { _csrf: session.csrf }, headers)).statusCode).toBe(303);
  });

  it("login CSRF: another site's form cannot sign a browser in to the inspector or the dashboard (403, no cookie)", async () => {
    for (const [url, key] of [
      ['/runs/login', KEYS.acmeProducer],
      ['/admin/login', KEYS.acmeAdmin],
    ] as const) {
      const crossSite: Record<string, string>[] = [
        { 'sec-fetch-site': 'cross-site' },
        { origin: 'https://evil.example' },
      ];
      for (const foreign of crossSite) {
        const answer = await form(url, { key }, foreign);
        expect(answer.statusCode, `${url} ${JSON.stringify(foreign)}`).toBe(403);
        expect(answer.headers['set-cookie']).toBeUndefined();
      }
      // The page's own form signs in.
      expect((await form(url, { key }, { 'sec-fetch-site': 'same-origin' })).statusCode).toBe(303);
    }
  });

  it('logout CSRF: another site cannot sign a browser out, nor can a link or image (GET); the own form with its token can', async () => {
    const session = await signIn(KEYS.acmeProducer);
    const stillIn = async () =>
      (await inject({ method: 'GET', url: '/runs', headers: { cookie: session.cookie } })).statusCode === 200;
    for (const url of ['/runs/logout', '/admin/logout']) {
      const crossSite = await form(
        url,
        { _csrf: session.csrf },
        { cookie: session.cookie, 'sec-fetch-site': 'cross-site' },
      );
      expect(crossSite.statusCode).toBe(403);
      expect((await inject({ method: 'GET', url, headers: { cookie: session.cookie } })).statusCode).toBe(200);
      const noToken = await form(url, {}, { cookie: session.cookie, 'sec-fetch-site': 'same-origin' });
      expect(noToken.statusCode).toBe(403);
      expect(await stillIn()).toBe(true);
    }
    const out = await form(
      '/runs/logout',
      { _csrf: session.csrf },
      { cookie: session.cookie, 'sec-fetch-site': 'same-origin' },
    );
    expect(out.statusCode).toBe(303);
    expect(await stillIn()).toBe(false);
  });

  it('the sign-in cookie is Secure behind a TLS proxy that AGENTQ_TRUST_PROXY trusts, and not when an untrusted client claims https', async () => {
    const behindProxy = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'agentq.example' };
    const untrusted = await form('/runs/login', { key: KEYS.acmeProducer }, behindProxy);
    expect(untrusted.statusCode).toBe(303);
    expect(String(untrusted.headers['set-cookie'])).not.toContain('Secure');
    const trusting = await api({ AGENTQ_TRUST_PROXY: '127.0.0.1' });
    for (const url of ['/runs/login', '/admin/login']) {
      // The browser behind the proxy posts from https://agentq.example: the same origin, seen through the proxy.
      // The API made a moment ago may not have reached Redis yet: it answers 503 (try again shortly) until then.
      const answer = await eventually(
        async () => {
          const posted = await form(
            url,
            { key: KEYS.acmeAdmin },
            { ...behindProxy, origin: 'https://agentq.example' },
            trusting,
          );
          return posted.statusCode === 503 ? undefined : posted;
        },
        15_000,
        'the new API to reach Redis',
      );
      expect(answer.statusCode, answer.body).toBe(303);
      const cookies = [answer.headers['set-cookie']].flat().map(String);
      expect(cookies.length).toBeGreaterThan(0);
      for (const cookie of cookies) expect(cookie).toMatch(/; HttpOnly; SameSite=Strict; .*; Secure$/);
    }
  });

  it("every page answers with a CSP (scripts from 'self' only, no framing), X-Frame-Options DENY, nosniff and a Referrer-Policy", async () => {
    const session = await signIn(KEYS.acmeAdmin, '/admin/login');
    const run = await startRun('chain', { steps: 1 });
    await env.client.wait(run);
    const pages = [
      '/runs/login',
      '/admin/login',
      '/runs',
      `/runs/${run}`,
      '/runs/no-such-run',
      '/runs/logout',
      '/admin/logout',
    ];
    for (const url of [...pages, '/admin/queues', '/docs']) {
      const answer = await inject({ method: 'GET', url, headers: { cookie: session.cookie, accept: 'text/html' } });
      expect(answer.headers['content-type'], url).toMatch(/^text\/html/);
      const csp = String(answer.headers['content-security-policy']);
      expect(csp, url).toMatch(/(^|;)script-src 'self'(;|$)/);
      expect(csp, url).toContain("frame-ancestors 'none'");
      if (pages.includes(url)) expect(csp, url).toMatch(/(^|;)style-src 'self'(;|$)/);
      expect(answer.headers['x-frame-options'], url).toBe('DENY');
      expect(answer.headers['x-content-type-options'], url).toBe('nosniff');
      expect(answer.headers['referrer-policy'], url).toBe('same-origin');
    }
  });

  it("a `notice` in a link puts no text on a real run page; the session's own action shows its result once", async () => {
    const session = await signIn(KEYS.acmeProducer);
    const run = await startRun('chain', { steps: 1, sleepMs: 60_000 });
    const phishing = 'Your API key has leaked: call +1 555 0100';
    const linked = await inject({
      method: 'GET',
      url: `/runs/${run}?notice=${encodeURIComponent(phishing)}`,
      headers: { cookie: session.cookie },
    });
    expect(linked.statusCode).toBe(200);
    expect(linked.body).not.toContain('Your API key has leaked');
    const cancelled = await form(
      `/runs/${run}/cancel`,
      { _csrf: session.csrf },
      { cookie: session.cookie, origin: OWN },
    );
    expect(cancelled.headers.location).toBe(`/runs/${run}`);
    const shown = await inject({ method: 'GET', url: `/runs/${run}`, headers: { cookie: session.cookie } });
    expect(shown.body).toMatch(/id="notice">cancel: the run is cancel/);
    const again = await inject({ method: 'GET', url: `/runs/${run}`, headers: { cookie: session.cookie } });
    expect(again.body).not.toContain('id="notice"');
  });

  it(`${WRONG_KEYS} wrong keys from one address: ${LIMIT} × 401, then 429 with Retry-After on every way in; the right key from that address is still accepted`, async () => {
    await awayFromMinuteEdge();
    const attacker = { remoteAddress: '203.0.113.7' };
    const wrong = (index: number): InjectOptions => {
      const key = `wrong-key-${index}-0123456789`;
      const basic = `Basic ${Buffer.from(`x:${key}`).toString('base64')}`;
      const ways: InjectOptions[] = [
        { method: 'GET', url: '/v1/runs', headers: bearer(key) },
        { method: 'GET', url: '/admin/queues/api/queues', headers: { authorization: basic } },
        { method: 'GET', url: '/runs', headers: bearer(key) },
        { method: 'GET', url: '/docs/json', headers: bearer(key) },
        { method: 'GET', url: '/metrics', headers: bearer(key) },
        {
          method: 'POST',
          url: index % 2 === 0 ? '/runs/login' : '/admin/login',
          payload: `key=${key}`,
          headers: { 'content-type': FORM },
        },
      ];
      return { ...ways[index % ways.length]!, ...attacker };
    };
    const statuses = new Map<number, number>();
    let lastRefusal: LightMyRequestResponse | undefined;
    for (let index = 0; index < WRONG_KEYS; index += 1) {
      const answer = await inject(wrong(index));
      statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
      if (answer.statusCode === 429) lastRefusal = answer;
    }
    recordFigure({ scenario: 'failed authentication', name: 'wrong_keys_sent', value: WRONG_KEYS });
    recordFigure({
      scenario: 'failed authentication',
      name: 'answers_401',
      value: statuses.get(401) ?? 0,
      goal: `= ${LIMIT}`,
    });
    recordFigure({
      scenario: 'failed authentication',
      name: 'answers_429',
      value: statuses.get(429) ?? 0,
      goal: `= ${WRONG_KEYS - LIMIT}`,
    });
    expect(Object.fromEntries(statuses)).toEqual({ 401: LIMIT, 429: WRONG_KEYS - LIMIT });
    const retryAfter = Number(lastRefusal!.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The throttle locks the guessing, not the owner: the right key from that address is accepted, a wrong one is not.
    const right = await inject({ method: 'GET', url: '/v1/runs', headers: bearer(KEYS.acmeProducer), ...attacker });
    expect(right.statusCode).toBe(200);
    const guess = await inject({
      method: 'GET',
      url: '/v1/runs',
      headers: bearer('one-more-guess-0123456'),
      ...attacker,
    });
    expect(guess.statusCode).toBe(429);
    expect(json(guess).error).toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('AGENTQ_AUTH_FAILURES_PER_MINUTE'),
    });
    // Another address, and the same attacker claiming another address in X-Forwarded-For (not trusted), as before.
    const other = await inject({
      method: 'GET',
      url: '/v1/runs',
      headers: bearer(KEYS.acmeProducer),
      remoteAddress: '203.0.113.8',
    });
    expect(other.statusCode).toBe(200);
    const spoofed = await inject({
      method: 'GET',
      url: '/v1/runs',
      headers: { ...bearer('spoofed-guess-0123456789'), 'x-forwarded-for': '198.51.100.1' },
      ...attacker,
    });
    expect(spoofed.statusCode).toBe(429);
  });

  it("behind a trusted proxy each client's failures count for its own address (X-Forwarded-For)", async () => {
    await awayFromMinuteEdge();
    const trusting = await api({ AGENTQ_TRUST_PROXY: '10.0.0.0/8' });
    const viaProxy = (client: string, key: string): InjectOptions => ({
      method: 'GET',
      url: '/v1/runs',
      headers: { ...bearer(key), 'x-forwarded-for': client },
      remoteAddress: '10.1.2.3',
    });
    for (let index = 0; index <= LIMIT; index += 1)
      await inject(viaProxy('198.51.100.20', `wrong-key-${index}-abcdefgh`), trusting);
    expect((await inject(viaProxy('198.51.100.20', 'wrong-key-again-abcdefgh'), trusting)).statusCode).toBe(429);
    expect((await inject(viaProxy('198.51.100.21', 'wrong-key-first-abcdefgh'), trusting)).statusCode).toBe(401);
    // A correct key is never refused, from the throttled client either.
    expect((await inject(viaProxy('198.51.100.20', KEYS.acmeProducer), trusting)).statusCode).toBe(200);
  });

  it("the inspector's pages count against the key's request rate limit: past it a page answers 429 with Retry-After", async () => {
    await awayFromMinuteEdge();
    const limited = await api({ AGENTQ_RATE_LIMIT_PER_MINUTE: '3' });
    const statuses: number[] = [];
    for (let index = 0; index < 4; index += 1)
      statuses.push(
        (await inject({ method: 'GET', url: '/runs', headers: bearer(KEYS.globexProducer) }, limited)).statusCode,
      );
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await inject({ method: 'GET', url: '/runs/x', headers: bearer(KEYS.globexProducer) }, limited);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('/docs and /docs/json need a key (a browser without one goes to the sign-in) unless AGENTQ_PUBLIC_DOCS=true', async () => {
    for (const url of ['/docs', '/docs/json']) {
      const anonymous = await inject({ method: 'GET', url });
      expect(anonymous.statusCode, url).toBe(401);
      expect(json<{ error: { message: string } }>(anonymous).error.message).toContain('AGENTQ_PUBLIC_DOCS');
      expect((await inject({ method: 'GET', url, headers: bearer(KEYS.globexProducer) })).statusCode, url).toBe(200);
    }
    const browser = await inject({ method: 'GET', url: '/docs', headers: { accept: 'text/html' } });
    expect(browser.statusCode).toBe(303);
    expect(browser.headers.location).toBe(`/runs/login?next=${encodeURIComponent('/docs')}`);
    const session = await signIn(KEYS.globexProducer);
    expect((await inject({ method: 'GET', url: '/docs/json', headers: { cookie: session.cookie } })).statusCode).toBe(
      200,
    );
    const open = await api({ AGENTQ_PUBLIC_DOCS: 'true' });
    expect((await inject({ method: 'GET', url: '/docs/json' }, open)).statusCode).toBe(200);
  });

  it('a Bull Board write from another origin is refused even with the admin key in Basic auth (which browsers resend on their own)', async () => {
    const writable = await api({ AGENTQ_DASHBOARD_WRITE: 'true' });
    const pause = (headers: Record<string, string>) =>
      inject(
        {
          method: 'PUT',
          url: '/admin/queues/api/queues/agentq-runs/pause',
          headers: { authorization: `Basic ${Buffer.from(`x:${KEYS.acmeAdmin}`).toString('base64')}`, ...headers },
        },
        writable,
      );
    expect((await pause({ 'sec-fetch-site': 'same-site', origin: OTHER_PORT })).statusCode).toBe(403);
    expect((await pause({ origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await pause({ 'sec-fetch-site': 'same-origin' })).statusCode).toBeLessThan(300);
  });
});
