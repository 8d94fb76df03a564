import { createHash } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTAKE_QUEUE } from '../../shared/contracts/queues.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { runIdForIdempotencyKey } from '../../shared/contracts/ids.js';
import { API_KEYS_ENV, json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { eventually } from '../helpers/test-env.js';

/**
 * Attack: a key of the `default` tenant (whose client-chosen ids are stored as they are)
 * creates a run whose id is another tenant's *future* batch question (`bat_k` + a hash of tenant and
 * Idempotency-Key + `.i0`), so that the victim's batch answers 409 or shows the attacker's output.
 * Expected: every entry point refuses a client-chosen id in agentq's namespace (`run_…`, `bat_…`) with
 * INVALID_INPUT, decided on the string alone; the victim's batch runs its own questions; and the owner
 * reads its batch question runs (`GET /v1/runs/bat_….i0`, which the batch page links to) while any
 * other tenant gets the 404 of a missing id.
 */
const DEFAULT_KEY = 'default-producer-key-0123456789';

/** The batch id agentq derives from an Idempotency-Key — what the attacker computes (batch-dispatcher.ts). */
const batchIdFor = (tenant: string, key: string) =>
  `bat_k${createHash('sha256').update(tenant).update('\0').update(key).digest('hex').slice(0, 27)}`;

describe('run ids: a client never takes an id agentq derives; batch question runs are their owner’s', () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({
      graphs: [echoRagGraph()],
      env: { AGENTQ_API_KEYS: `${API_KEYS_ENV},${DEFAULT_KEY}:default:producer` },
    });
  });
  afterAll(async () => env?.close());

  const post = (key: string, payload: Record<string, unknown>) =>
    env.as(key, { method: 'POST', url: '/v1/runs', payload });

  it("the default tenant cannot pre-take acme's batch question id; acme's batch answers its own questions", async () => {
    const idempotencyKey = `nightly-${Date.now()}`;
    const victimRun = `${batchIdFor('acme', idempotencyKey)}.i0`;
    const attack = await post(DEFAULT_KEY, {
      graph: 'echo-rag',
      input: { query: 'attacker output' },
      runId: victimRun,
    });
    expect(attack.statusCode).toBe(400);
    expect(json(attack)).toMatchObject({
      error: {
        code: 'INVALID_INPUT',
        message: expect.stringContaining('a prefix reserved for the run ids agentq makes'),
      },
    });
    expect(await env.client.get(victimRun)).toBeNull();

    const submitted = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      headers: { 'idempotency-key': idempotencyKey },
      payload: { collection: 'docs', questions: [{ question: 'mine' }], options: { graph: 'echo-rag' } },
    });
    expect(submitted.statusCode).toBe(202);
    const batchId = json<{ id: string }>(submitted).id;
    expect(`${batchId}.i0`).toBe(victimRun);
    const results = await eventually(async () => {
      const body = json<{ status: string; results?: { runId: string; answer: string | null }[] }>(
        await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/batches/${batchId}` }),
      );
      return body.status === 'completed' && body.results;
    }, 20_000);
    expect(results).toEqual([expect.objectContaining({ runId: victimRun, answer: 'echo: mine' })]);

    // The owner reads the run the batch page links to; another tenant gets exactly a missing id's 404.
    const own = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${victimRun}` });
    expect(own.statusCode).toBe(200);
    expect(json<RunRecord>(own)).toMatchObject({ id: victimRun, tenant: 'acme', status: 'completed' });
    const steps = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${victimRun}/steps` });
    expect(steps.statusCode).toBe(200);
    const missing = `${batchIdFor('acme', `${idempotencyKey}-never`)}.i0`;
    const shape = (response: LightMyRequestResponse, id: string) => ({
      status: response.statusCode,
      body: response.body.replaceAll(id, '<id>'),
    });
    for (const key of [KEYS.globexProducer, DEFAULT_KEY]) {
      const foreign = await env.as(key, { method: 'GET', url: `/v1/runs/${victimRun}` });
      const control = await env.as(key, { method: 'GET', url: `/v1/runs/${missing}` });
      expect(foreign.statusCode).toBe(404);
      expect(shape(foreign, victimRun)).toEqual(shape(control, missing));
    }
  });

  it('every prefix of the namespace, every entry point: API (any tenant), client, raw job', async () => {
    const names = ['run_0123456789abcdef01234567', 'run_anything', 'bat_abc.i0', `bat_k${'0'.repeat(27)}.i3`];
    for (const runId of names) {
      for (const key of [DEFAULT_KEY, KEYS.acmeProducer]) {
        const refused = await post(key, { graph: 'echo-rag', input: { query: 'x' }, runId });
        expect(refused.statusCode).toBe(400);
        expect(json(refused)).toMatchObject({ error: { code: 'INVALID_INPUT' } });
      }
      await expect(env.client.enqueue({ graph: 'echo-rag', input: { query: 'x' }, runId })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringContaining(`runId '${runId}' starts with`),
      });
    }
    // A raw job (another service, plain BullMQ) fails once with the reason, under an id of its own.
    const job = await env
      .queue(INTAKE_QUEUE)
      .add('raw', { v: 1, graph: 'echo-rag', input: { query: 'x' }, runId: 'bat_raw.i0', tenant: 'acme' });
    const failed = await eventually(async () => {
      const state = await job.getState();
      return state === 'failed' && state;
    }, 10_000);
    expect(failed).toBe('failed');
    expect(await env.client.get('bat_raw.i0')).toBeNull();
    const { runs } = await env.client.store.reads.list('acme', { status: 'failed' });
    expect(runs.find((run) => run.error?.message.includes("runId 'bat_raw.i0' starts with 'bat_'"))).toBeDefined();

    // Honest ids still work as before: a name of the caller's own, and an idempotency key's id.
    const honest = await post(DEFAULT_KEY, { graph: 'echo-rag', input: { query: 'x' }, runId: 'order-17_run' });
    expect(honest.statusCode).toBe(202);
    expect(json<RunRecord>(honest).id).toBe('order-17_run');
    const keyed = await post(KEYS.acmeProducer, { graph: 'echo-rag', input: { query: 'x' }, idempotencyKey: 'k-1' });
    expect(json<RunRecord>(keyed).id).toBe(runIdForIdempotencyKey('acme', 'k-1'));
  });
});
