import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTAKE_QUEUE } from '../../shared/contracts/queues.js';
import { isTerminal, type RunRecord } from '../../shared/contracts/run-record.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { atScale } from '../helpers/suite-scale.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually } from '../helpers/test-env.js';

/**
 * Every way a run is created passes one admission (TenantAdmission): the per-key rate
 * limit, the tenant's in-flight cap and fair share. Attacks, each with its expected answer:
 * - schedules ticking faster than the cap: the tenant never holds more than AGENTQ_TENANT_MAX_INFLIGHT
 *   unfinished runs, and every one of them holds an in-flight slot (the count was 0 before);
 * - schedules ticking faster than the key's rate limit: ticks past it start nothing;
 * - batches whose concurrencies add up past the cap: at most the cap in flight, and every question is
 *   still answered once slots free;
 * - the client library, raw jobs and retries: held to the same cap (raw jobs wait for a slot, not fail).
 */
const CAP = 4;

/** The tenant's runs that are not finished, as the run store lists them. */
async function unfinished(env: ApiTestEnv, tenant: string): Promise<RunRecord[]> {
  const { runs } = await env.client.store.reads.list(tenant, { limit: 1000 });
  return runs.filter((run) => !isTerminal(run.status));
}

/** Cancels every unfinished run of the tenant and waits until none is left. */
async function drain(env: ApiTestEnv, tenant: string): Promise<void> {
  await eventually(
    async () => {
      const left = await unfinished(env, tenant);
      await Promise.all(left.map((run) => env.client.cancel(run.id).catch(() => undefined)));
      return left.length === 0;
    },
    20_000,
    `${tenant}'s runs to end`,
  );
}

describe(`admission: the in-flight cap (${CAP}) holds for every way a run is created`, () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({
      graphs: [echoRagGraph()],
      // A batch starved by another batch of its tenant is started again by the reconciler's repair.
      reconciler: true,
      env: {
        AGENTQ_TENANT_MAX_INFLIGHT: String(CAP),
        AGENTQ_RECONCILE_INTERVAL_MS: '300',
      },
    });
  });
  afterAll(async () => env?.close());

  it('schedules ticking past the cap: at most the cap unfinished, each holding a slot', async () => {
    const schedules = atScale(4, 20);
    const ids: string[] = [];
    for (let index = 0; index < schedules; index += 1) {
      const created = await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/schedules',
        payload: { graph: 'chain', input: { steps: 1, sleepMs: 600_000 }, everyMs: 1000 },
      });
      expect(created.statusCode).toBe(201);
      ids.push(json<{ id: string }>(created).id);
    }
    let most = 0;
    let open: RunRecord[];
    let slots: number;
    try {
      const until = Date.now() + atScale(3500, 20_000);
      while (Date.now() < until) {
        most = Math.max(most, (await unfinished(env, 'acme')).length);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      for (const id of ids) await env.as(KEYS.acmeProducer, { method: 'DELETE', url: `/v1/schedules/${id}` });
      open = await unfinished(env, 'acme');
      slots = await env.client.store.redis.zcard(env.client.store.keys.tenantInflight('acme'));
      await drain(env, 'acme');
    }
    recordFigure({ scenario: 'admission', name: 'schedule_runs_unfinished_max', value: most, goal: `≤ ${CAP}` });
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(CAP);
    expect(slots).toBe(open.length);
  });

  it('batches whose concurrencies add up past the cap: at most the cap in flight; all answered', async () => {
    const submit = (questions: number) =>
      env.as(KEYS.globexProducer, {
        method: 'POST',
        url: '/v1/batches',
        payload: {
          collection: 'docs',
          questions: Array.from({ length: questions }, (_, index) => ({ question: `slow ${index}` })),
          options: { graph: 'echo-rag', concurrency: 3 },
        },
      });
    const perBatch = atScale(6, 40);
    const batches = [await submit(perBatch), await submit(perBatch)].map(
      (response) => json<{ id: string }>(response).id,
    );
    let most = 0;
    const done = await eventually(
      async () => {
        most = Math.max(most, (await unfinished(env, 'globex')).length);
        const states = await Promise.all(batches.map((id) => env.client.batches.get(id)));
        return states.every((batch) => batch?.status === 'completed') && states;
      },
      atScale(30_000, 120_000),
      'both batches',
    );
    recordFigure({ scenario: 'admission', name: 'batch_runs_unfinished_max', value: most, goal: `≤ ${CAP}` });
    expect(most).toBeLessThanOrEqual(CAP);
    for (const batch of done) expect(batch!.progress).toMatchObject({ total: perBatch, completed: perBatch });
  });

  it('the client library, raw jobs and retries: the same cap; a raw job waits for a slot instead of failing', async () => {
    const long = { graph: 'chain', input: { steps: 1, sleepMs: 600_000 } };
    const held = [];
    for (let index = 0; index < CAP; index += 1) held.push(await env.client.enqueue(long));
    await expect(env.client.enqueue(long)).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      message: expect.stringContaining('AGENTQ_TENANT_MAX_INFLIGHT'),
    });
    // A raw job at the cap is parked (delayed), not failed, and no run exists for it yet.
    const job = await env
      .queue(INTAKE_QUEUE)
      .add('raw', { v: 1, graph: 'chain', input: { steps: 1 }, runId: 'raw-at-cap' });
    await eventually(async () => (await job.getState()) === 'delayed', 10_000, 'the raw job parked');
    expect(await env.client.get('raw-at-cap')).toBeNull();
    // A failed run's retry is in flight again: refused at the cap too.
    await env.client.cancel(held.pop()!.id);
    const failing = await env.client.enqueue({ graph: 'chain', input: { steps: 1, failTimes: 100 } });
    await eventually(async () => (await env.client.get(failing.id))?.status === 'failed', 15_000, 'a failed run');
    await env.client.enqueue(long);
    await expect(env.client.retry(failing.id)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect((await env.client.get(failing.id))?.status).toBe('failed');
    // Slots free: the parked raw job is taken in and runs.
    await drain(env, 'default');
    await eventually(async () => (await env.client.get('raw-at-cap'))?.status === 'completed', 15_000, 'the raw job');
  });
});

describe("admission: schedule ticks are charged to their creator key's rate limit", () => {
  const LIMIT = 10;
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({ env: { AGENTQ_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
  });
  afterAll(async () => env?.close());

  it(`${LIMIT} requests and runs a minute: ticks past it start nothing`, async () => {
    const schedules = 5;
    // The budget is a fixed window per minute (on this process's clock): start the schedules early in a
    // minute so the 429 below is not answered from the next window's fresh budget.
    const leftInMinute = 60_000 - (Date.now() % 60_000);
    if (leftInMinute < 20_000) await new Promise((resolve) => setTimeout(resolve, leftInMinute + 100));
    for (let index = 0; index < schedules; index += 1) {
      const created = await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/schedules',
        payload: { graph: 'chain', input: { steps: 1 }, everyMs: 1000 },
      });
      expect(created.statusCode).toBe(201);
    }
    // Every tick of 5 schedules for 6 s would be ~30 runs; the key has LIMIT - 5 left this minute (and,
    // should a slow machine stretch the test across a minute's edge, LIMIT more in the next).
    await new Promise((resolve) => setTimeout(resolve, 6000));
    const { runs } = await env.client.store.reads.list('acme', { limit: 1000 });
    recordFigure({
      scenario: 'admission',
      name: 'schedule_runs_in_6s_at_rate_limit',
      value: runs.length,
      goal: `≤ ${2 * LIMIT - schedules}`,
    });
    expect(runs.length).toBeLessThanOrEqual(2 * LIMIT - schedules);
    const answer = await env.as(KEYS.acmeProducer, { method: 'GET', url: '/v1/schedules' });
    expect(answer.statusCode).toBe(429);
    for (const schedule of (await env.client.schedules.list({ tenant: 'acme' })) ?? [])
      await env.client.schedules.delete(schedule.id, { tenant: 'acme' });
  });
});
