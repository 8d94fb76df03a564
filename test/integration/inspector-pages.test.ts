import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { eventually } from '../helpers/test-env.js';
import { Calls, threeStepGraph } from '../helpers/test-graphs.js';
import { tenantRunId } from '../../shared/contracts/ids.js';

/** The inspector's pages over HTTP (the browser test drives the run page; these pin the rest). */
describe('run inspector pages', () => {
  let env: ApiTestEnv;
  const failing = new Set<string>();
  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [echoRagGraph(), threeStepGraph(new Calls(), failing)] });
  });
  afterAll(async () => env.close());

  it('a batch page shows progress and each question, and its results download as CSV and JSON Lines; other tenants get 404', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      payload: {
        collection: 'docs',
        questions: [{ id: 'q1', question: 'first' }, { question: 'second' }],
        options: { concurrency: 2, graph: 'echo-rag' },
      },
    });
    const batchId = json(created).id as string;
    await eventually(
      async () =>
        json(await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/batches/${batchId}` })).status === 'completed',
      20_000,
    );
    const html = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/batches/${batchId}` });
    expect(html.statusCode).toBe(200);
    expect(html.headers['content-type']).toMatch(/^text\/html/);
    expect(html.body).toContain('2 / 2');
    expect(html.body.match(/class="question" data-status="completed"/g)).toHaveLength(2);
    expect(html.body).toContain('echo: first');
    const csv = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/batches/${batchId}/results.csv` });
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.headers['content-disposition']).toContain(`${batchId}.csv`);
    expect(csv.body.split('\r\n')[1]).toMatch(/^q1,first,completed,echo: first,/);
    const lines = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/batches/${batchId}/results.jsonl` });
    expect(lines.body.trim().split('\n')).toHaveLength(2);
    expect((await env.as(KEYS.globexProducer, { method: 'GET', url: `/batches/${batchId}` })).statusCode).toBe(404);
    expect(
      (await env.as(KEYS.globexProducer, { method: 'GET', url: `/batches/${batchId}/results.csv` })).statusCode,
    ).toBe(404);
  });

  it('without a key a page redirects to the sign-in, an event stream answers 401; a wrong key is 401 and bad input 4xx', async () => {
    const page = await env.app.inject({ method: 'GET', url: '/runs?status=failed' });
    expect(page.statusCode).toBe(303);
    expect(page.headers.location).toBe(`/runs/login?next=${encodeURIComponent('/runs?status=failed')}`);
    expect((await env.app.inject({ method: 'GET', url: '/runs/x/events' })).statusCode).toBe(401);
    expect(
      (await env.app.inject({ method: 'GET', url: '/runs', headers: { authorization: 'Bearer nope' } })).statusCode,
    ).toBe(401);
    expect((await env.as(KEYS.acmeProducer, { method: 'GET', url: '/runs?status=nonsense' })).statusCode).toBe(400);
    expect((await env.as(KEYS.acmeProducer, { method: 'GET', url: '/runs?cursor=garbage' })).statusCode).toBeLessThan(
      500,
    );
    const bad = await env.app.inject({
      method: 'POST',
      url: '/runs/login',
      payload: 'key=wrong',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(bad.statusCode).toBe(401);
    const good = await env.app.inject({
      method: 'POST',
      url: '/runs/login',
      payload: `key=${KEYS.acmeProducer}&next=//evil.example`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(good.statusCode).toBe(303);
    expect(good.headers.location).toBe('/runs');
    expect(String(good.headers['set-cookie'])).toMatch(/^agentq_inspect=[^;]+; Path=\/; HttpOnly; SameSite=Strict/);
    // The pages are not part of the API's OpenAPI document.
    const document = json<{ paths: Record<string, unknown> }>(
      await env.as(KEYS.acmeProducer, { method: 'GET', url: '/docs/json' }),
    );
    expect(Object.keys(document.paths).some((path) => path.startsWith('/runs') || path.startsWith('/batches/'))).toBe(
      false,
    );
  });

  it('the retry button continues a failed run from its last commit; answering a run that is not waiting says so', async () => {
    // acme's name for the run; the run's id is scoped by tenant (tenantRunId), which the graph sees.
    const runId = 'inspector-retry-1';
    const stored = tenantRunId('acme', runId);
    failing.add(stored);
    await env.as(KEYS.acmeProducer, { method: 'POST', url: '/v1/runs', payload: { graph: 'three', input: {}, runId } });
    expect((await env.client.wait(stored)).status).toBe('failed');
    const failedPage = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/runs/${runId}` });
    expect(failedPage.body).toContain('id="retry"');
    expect(failedPage.body).toContain('TOOL_ERROR');
    failing.delete(stored);
    // A signed-in browser: its forms carry the session's CSRF token; the result comes back as a one-time notice.
    const signedIn = await env.app.inject({
      method: 'POST',
      url: '/runs/login',
      payload: `key=${KEYS.acmeProducer}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    const page = await env.app.inject({ method: 'GET', url: `/runs/${runId}`, headers: { cookie } });
    const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
    // A page for a Bearer caller has no token to carry: its posts are not a browser's.
    expect(failedPage.body).not.toContain('name="_csrf"');
    const form = (path: string, fields: Record<string, string>) =>
      env.app.inject({
        method: 'POST',
        url: path,
        payload: new URLSearchParams(fields).toString(),
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      });
    const retried = await form(`/runs/${runId}/retry`, { _csrf: token });
    expect(retried.statusCode).toBe(303);
    expect(retried.headers.location).toBe(`/runs/${encodeURIComponent(stored)}`);
    const shown = await env.app.inject({ method: 'GET', url: String(retried.headers.location), headers: { cookie } });
    expect(shown.body).toContain('retry: the run continues from its last commit');
    expect(await env.client.wait(stored)).toMatchObject({ status: 'completed', output: ['a', 'b', 'c'] });
    const resumed = await form(`/runs/${runId}/resume`, { _csrf: token, value: '42' });
    const answered = await env.app.inject({
      method: 'GET',
      url: String(resumed.headers.location),
      headers: { cookie },
    });
    expect(answered.body).toContain('resume: the run is completed, not waiting');
    // A Bearer caller (a script) gets the same redirect, without a notice.
    const scripted = await env.as(KEYS.acmeProducer, { method: 'POST', url: `/runs/${runId}/retry` });
    expect(scripted.statusCode).toBe(303);
    expect(scripted.headers.location).toBe(`/runs/${encodeURIComponent(stored)}`);
    expect((await env.as(KEYS.globexProducer, { method: 'POST', url: `/runs/${runId}/retry` })).statusCode).toBe(404);
  });

  it('the runs list is newest first, filters by status and graph', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      ids.push(
        json(
          await env.as(KEYS.acmeProducer, {
            method: 'POST',
            url: '/v1/runs',
            payload: { graph: 'chain', input: { steps: 1 } },
          }),
        ).id as string,
      );
    }
    for (const id of ids) await env.client.wait(id);
    const list = (await env.as(KEYS.acmeProducer, { method: 'GET', url: '/runs?graph=chain&status=completed' })).body;
    const order = ids.map((id) => list.indexOf(`data-run="${id}"`));
    expect(order.every((position) => position > 0)).toBe(true);
    expect([...order].sort((left, right) => right - left)).toEqual(order);
    const none = (await env.as(KEYS.acmeProducer, { method: 'GET', url: '/runs?graph=chain&status=failed' })).body;
    expect(none).toContain('No runs.');
  });

  it("an admin's all-tenants list merges every tenant's runs newest first and pages through them without gaps or repeats", async () => {
    const posted: string[] = [];
    for (let index = 0; index < 60; index += 1) {
      const key = index % 2 === 0 ? KEYS.acmeProducer : KEYS.globexProducer;
      posted.push(
        json(await env.as(key, { method: 'POST', url: '/v1/runs', payload: { graph: 'chain', input: { steps: 1 } } }))
          .id as string,
      );
    }
    const seen: string[] = [];
    let url: string | null = '/runs?graph=chain';
    for (let pageNo = 0; url && pageNo < 10; pageNo += 1) {
      const body: string = (await env.as(KEYS.acmeAdmin, { method: 'GET', url })).body;
      const rows = [...body.matchAll(/data-run="([^"]+)"/g)].map((match) => match[1]!);
      expect(rows.length).toBeLessThanOrEqual(50);
      seen.push(...rows);
      const next: RegExpMatchArray | null = body.match(/id="next-page" href="([^"]+)"/);
      url = next ? next[1]!.replaceAll('&amp;', '&') : null;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of posted) expect(seen).toContain(id);
    // Newest first across tenants and pages (runs created in the same millisecond in either order).
    const created = new Map(
      await Promise.all(posted.map(async (id) => [id, Date.parse((await env.client.get(id))!.createdAt)] as const)),
    );
    const times = seen.filter((id) => created.has(id)).map((id) => created.get(id)!);
    expect([...times].sort((left, right) => right - left)).toEqual(times);
  });
});
