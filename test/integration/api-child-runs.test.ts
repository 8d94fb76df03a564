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
});
