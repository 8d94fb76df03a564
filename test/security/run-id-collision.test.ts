import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdForIdempotencyKey } from '../../shared/contracts/ids.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { eventually } from '../helpers/test-env.js';

/**
 * POST /v1/runs with a runId another tenant uses must answer exactly as an id nobody
 * uses. Compared: status code, error code, and the body with the fields that differ for every new run
 * (id, times, the location header) set aside.
 */
describe('a client-chosen runId of another tenant answers as an unused one', () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv();
  });
  afterAll(async () => env?.close());

  const post = (key: string, payload: Record<string, unknown>) =>
    env.as(key, { method: 'POST', url: '/v1/runs', payload });
  /** What does not depend on the id: status, headers other than location, body without id and times. */
  const shape = (response: LightMyRequestResponse, name: string) => {
    const body = json<Record<string, unknown>>(response);
    const { id: _id, createdAt: _c, updatedAt: _u, ...rest } = body;
    const text = JSON.stringify(rest).replaceAll(name, '<name>');
    return { status: response.statusCode, replayed: response.headers['idempotent-replayed'], text };
  };

  it('collision and unused id: same 202, same body, each tenant keeps its own run', async () => {
    const suffix = `${Date.now()}`;
    const taken = `order-${suffix}`;
    const unused = `other-${suffix}`;
    const theirs = json<RunRecord>(
      await post(KEYS.globexProducer, { graph: 'chain', input: { steps: 1 }, runId: taken }),
    );
    await eventually(async () => (await env.client.get(theirs.id))?.status === 'completed', 15_000, "globex's run");

    const collision = await post(KEYS.acmeProducer, { graph: 'chain', input: { steps: 2 }, runId: taken });
    const fresh = await post(KEYS.acmeProducer, { graph: 'chain', input: { steps: 2 }, runId: unused });
    expect(collision.statusCode).toBe(202);
    expect(shape(collision, taken)).toEqual(shape(fresh, unused));
    const mine = json<RunRecord>(collision);
    expect(mine).toMatchObject({ tenant: 'acme', status: 'queued' });
    expect(mine.id).not.toBe(theirs.id);

    // Each tenant reads its own run under the name it chose; globex's run is untouched.
    const read = async (key: string) => json<RunRecord>(await env.as(key, { method: 'GET', url: `/v1/runs/${taken}` }));
    await eventually(async () => (await read(KEYS.acmeProducer)).status === 'completed', 15_000, "acme's run");
    expect(await read(KEYS.acmeProducer)).toMatchObject({ id: mine.id, tenant: 'acme', output: { visited: [0, 1] } });
    expect(await read(KEYS.globexProducer)).toMatchObject({
      id: theirs.id,
      tenant: 'globex',
      output: { visited: [0] },
    });

    // Posting the same name again is an idempotent replay of the caller's own run, not a conflict.
    const replay = await post(KEYS.acmeProducer, { graph: 'chain', input: { steps: 2 }, runId: taken });
    expect(replay.statusCode).toBe(202);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(json<RunRecord>(replay).id).toBe(mine.id);
  });

  it("an id agentq made (another tenant's or nobody's) is refused on its form alone: same 400, same error code", async () => {
    const made = json<RunRecord>(
      await post(KEYS.globexProducer, { graph: 'chain', input: { steps: 1 }, idempotencyKey: 'guessable' }),
    );
    expect(made.id).toBe(runIdForIdempotencyKey('globex', 'guessable'));
    const nobodys = runIdForIdempotencyKey('globex', `never-used-${Date.now()}`);
    const probe = await post(KEYS.acmeProducer, { graph: 'chain', input: { steps: 1 }, runId: made.id });
    const control = await post(KEYS.acmeProducer, { graph: 'chain', input: { steps: 1 }, runId: nobodys });
    expect(probe.statusCode).toBe(400);
    expect(json(probe)).toMatchObject({ error: { code: 'INVALID_INPUT' } });
    expect(shape(probe, made.id)).toEqual(shape(control, nobodys));
  });
});
