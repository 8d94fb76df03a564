import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildRunLink, RunRecord } from '../../shared/contracts/run-record.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { childDoubleGraph, parentSumGraph } from '../helpers/child-run-graphs.js';

/** The HTTP API's side of child runs: a child's record names its parent, the parent's children are paged. */
describe('API: child runs', () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [childDoubleGraph(), parentSumGraph()] });
  });
  afterAll(async () => env?.close());

  /** A parent-sum run of the tenant the inspector's pages are asked for. */
  const enqueueAsAcme = async (input: { ns: number[] }): Promise<RunRecord> => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'parent-sum', input },
    });
    expect(created.statusCode).toBe(202);
    return json<RunRecord>(created);
  };

  it('GET /v1/runs/:id/children pages the children; GET /v1/runs/:child names the parent; another tenant gets 404', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'parent-sum', input: { ns: [1, 2, 3, 4, 5] } },
    });
    expect(created.statusCode).toBe(202);
    const parent = json<RunRecord>(created);
    await env.client.wait(parent.id);
    const seen: ChildRunLink[] = [];
    let cursor: string | null = null;
    const totals: number[] = [];
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : '?limit=2';
      const page = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${parent.id}/children${query}` });
      expect(page.statusCode).toBe(200);
      const body = json<{ children: ChildRunLink[]; nextCursor: string | null; total: number }>(page);
      seen.push(...body.children);
      cursor = body.nextCursor;
      totals.push(body.total);
    } while (cursor);
    expect(new Set(totals)).toEqual(new Set([5]));
    expect(new Set(seen.map((child) => child.runId)).size).toBe(5);
    expect(seen[0]).toMatchObject({ graph: 'child-double', step: 's0.t0', wait: true });
    const child = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${seen[0]!.runId}` });
    expect(json<RunRecord>(child)).toMatchObject({ parentRunId: parent.id, parentStep: 's0.t0', tenant: 'acme' });
    const foreign = await env.as(KEYS.globexProducer, { method: 'GET', url: `/v1/runs/${parent.id}/children` });
    expect(foreign.statusCode).toBe(404);
  });

  it('the inspector: a parent page lists its children linked, a page at a time; a child page links its parent', async () => {
    const parent = await enqueueAsAcme({ ns: [1, 2, 3] });
    await env.client.wait(parent.id);
    const { children } = await env.client.children(parent.id);
    expect(children).toHaveLength(3);

    const page = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/runs/${parent.id}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h2>Child runs</h2>');
    for (const child of children)
      expect(page.body).toContain(`<a class="child-run" href="/runs/${child.runId}"><code>${child.runId}</code></a>`);
    expect(page.body).toContain('3 of 3 shown.');
    expect(page.body).not.toContain('id="parent-run"');

    const childPage = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/runs/${children[0]!.runId}` });
    expect(childPage.statusCode).toBe(200);
    expect(childPage.body).toContain(`<a id="parent-run" href="/runs/${parent.id}"><code>${parent.id}</code></a>`);
    expect(childPage.body).not.toContain('<h2>Child runs</h2>');
  });

  // HSCAN decides how many fields a page holds (a small hash answers all at once): the test follows the
  // links to the end, however many pages that takes, and checks every child was listed once.
  it('the inspector lists a fan-out of 200 children through its "More children" links', async () => {
    const ns = Array.from({ length: 200 }, (_, at) => at);
    const parent = await enqueueAsAcme({ ns });
    await env.client.wait(parent.id, { timeoutMs: 120_000 });
    const seen = new Set<string>();
    let url: string | null = `/runs/${parent.id}`;
    let pages = 0;
    while (url && pages < 50) {
      const page = await env.as(KEYS.acmeProducer, { method: 'GET', url });
      expect(page.statusCode).toBe(200);
      for (const match of page.body.matchAll(/<a class="child-run" href="\/runs\/([^"]+)">/g)) seen.add(match[1]!);
      url = /<a id="more-children" href="([^"]+)">/.exec(page.body)?.[1]?.replaceAll('&amp;', '&') ?? null;
      pages += 1;
    }
    expect(url).toBeNull();
    expect(seen.size).toBe(200);
  }, 180_000);
});
