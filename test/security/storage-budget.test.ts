import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { atScale } from '../helpers/suite-scale.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually } from '../helpers/test-env.js';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { chargedRunBytes, storedRunBytes } from '../../bench/lib/stored-bytes.js';

/**
 * Attack: a tenant posts run after run with large inputs that fail at once (so the
 * in-flight cap never holds them), each kept in Redis for the retention period. Expected: the tenant's
 * storage budget (AGENTQ_TENANT_MAX_BYTES, or `storageBytes` of its limits) refuses the run that would
 * pass it — 429 STORAGE_BUDGET_EXCEEDED naming the budget, 413 when one input alone is larger — and Redis
 * grows by about the budget, not by every input; purging a run or its retention ending frees its bytes.
 */
const INPUT_BYTES = atScale(50_000, 1_000_000);
const RUNS = atScale(20, 100);
const BUDGET = atScale(200_000, 10 * 1024 * 1024);
const RETENTION_SECONDS = 3;

describe(`storage budget: ${RUNS} runs of ${INPUT_BYTES} B inputs against ${BUDGET} B`, () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({
      env: {
        AGENTQ_TENANT_MAX_BYTES: String(BUDGET),
        AGENTQ_RETENTION_SECONDS: String(RETENTION_SECONDS),
        // Above the budget, so that an input larger than the whole budget reaches the budget's check
        // (at full scale the budget is 10 MiB: a 2 MiB body limit answered PAYLOAD_TOO_LARGE first).
        AGENTQ_BODY_LIMIT_BYTES: String(Math.max(2 * 1024 * 1024, BUDGET + 1024 * 1024)),
      },
    });
  });
  afterAll(async () => env?.close());

  /** A chain run whose input the graph rejects (unknown field): it fails at its first step. */
  const failingRun = (bytes: number) => ({ graph: 'chain', input: { steps: 1, pad: 'x'.repeat(bytes) } });
  const post = (key: string, payload: Record<string, unknown>) =>
    env.as(key, { method: 'POST', url: '/v1/runs', payload });
  const usedMemory = async () => Number(/^used_memory:(\d+)/m.exec(await env.client.store.redis.info('memory'))![1]);

  it('the run past the budget gets 429 with a clear message; Redis grows by about the budget', async () => {
    const before = await usedMemory();
    const answers: number[] = [];
    let refusal: Record<string, unknown> | undefined;
    let accepted: RunRecord | undefined;
    for (let index = 0; index < RUNS; index += 1) {
      const response = await post(KEYS.acmeProducer, failingRun(INPUT_BYTES));
      answers.push(response.statusCode);
      if (response.statusCode === 429) refusal ??= { ...json(response), retryAfter: response.headers['retry-after'] };
      else accepted = json<RunRecord>(response);
    }
    const grown = (await usedMemory()) - before;
    const admitted = answers.filter((status) => status === 202).length;
    recordFigure({
      scenario: 'storage budget',
      name: 'runs_admitted',
      value: admitted,
      goal: `≤ ${BUDGET / INPUT_BYTES}`,
    });
    recordFigure({
      scenario: 'storage budget',
      name: 'redis_growth_bytes',
      value: grown,
      goal: `< 2 × ${BUDGET} + 2 MiB (all: ${RUNS * INPUT_BYTES})`,
    });
    expect(answers.every((status) => status === 202 || status === 429)).toBe(true);
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(Math.floor(BUDGET / INPUT_BYTES));
    expect(refusal).toMatchObject({
      error: {
        code: 'STORAGE_BUDGET_EXCEEDED',
        message: expect.stringContaining(`storage budget of ${BUDGET} bytes (AGENTQ_TENANT_MAX_BYTES`),
      },
      retryAfter: expect.any(String),
    });
    expect(grown).toBeLessThan(2 * BUDGET + 2 * 1024 * 1024);
    // Another tenant's budget is its own.
    expect((await post(KEYS.globexProducer, failingRun(INPUT_BYTES))).statusCode).toBe(202);
    // The client library is held to the same budget.
    await expect(env.client.enqueue({ ...failingRun(INPUT_BYTES), tenant: 'acme' })).rejects.toMatchObject({
      code: 'STORAGE_BUDGET_EXCEEDED',
      retryable: true,
    });

    // Purging a finished run gives its bytes back at once.
    await eventually(async () => (await env.client.get(accepted!.id))?.status === 'failed', 15_000, 'the run fails');
    expect(
      (await env.as(KEYS.acmeProducer, { method: 'DELETE', url: `/v1/runs/${accepted!.id}?purge=true` })).statusCode,
    ).toBe(204);
    expect((await post(KEYS.acmeProducer, failingRun(INPUT_BYTES))).statusCode).toBe(202);
    // Once the runs' retention ends, their bytes are free again.
    await new Promise((resolve) => setTimeout(resolve, (RETENTION_SECONDS + 1) * 1000));
    expect((await post(KEYS.acmeProducer, failingRun(INPUT_BYTES))).statusCode).toBe(202);
  });

  it('one input larger than the whole budget: 413; a tenant limit (storageBytes) set by an admin applies', async () => {
    const huge = await post(KEYS.acmeProducer, failingRun(BUDGET + 10));
    expect(huge.statusCode).toBe(413);
    expect(json(huge)).toMatchObject({
      error: { code: 'STORAGE_BUDGET_EXCEEDED', message: expect.stringContaining('whole storage budget') },
    });
    const set = await env.as(KEYS.acmeAdmin, {
      method: 'PUT',
      url: '/v1/admin/tenants/globex/limits',
      payload: { storageBytes: 5000 },
    });
    expect(set.statusCode).toBe(200);
    expect(json(set)).toMatchObject({ limits: { storageBytes: 5000 } });
    expect((await post(KEYS.globexProducer, failingRun(6000))).statusCode).toBe(413);
    // globex holds a 50 kB run from the first test until its retention ends: wait it out, then fill up.
    await new Promise((resolve) => setTimeout(resolve, (RETENTION_SECONDS + 1) * 1000));
    expect((await post(KEYS.globexProducer, failingRun(3000))).statusCode).toBe(202);
    expect((await post(KEYS.globexProducer, failingRun(3000))).statusCode).toBe(429);
  });

  it("a finished run's output counts too, with the rest of what it keeps", async () => {
    const run = json<RunRecord>(await post(KEYS.globexProducer, { graph: 'chain', input: { steps: 1 } }));
    const done = await env.client.wait(run.id, { timeoutMs: 15_000 });
    expect(done.status).toBe('completed');
    const { redis, keys } = env.client.store;
    const charged = await chargedRunBytes(redis, keys, 'globex', run.id);
    expect(charged).toBeGreaterThan(
      Buffer.byteLength(JSON.stringify({ steps: 1 })) + Buffer.byteLength(JSON.stringify(done.output)),
    );
    expect(charged).toBeLessThanOrEqual(await storedRunBytes(redis, keys, run.id));
  });

  it('documents count too: a document past the budget fails alone with the reason; deleting one frees its bytes', async () => {
    const ingest = new IngestClient({ config: env.config, tenant: 'initech' });
    try {
      const big = (name: string) => ({ name, content: Buffer.alloc(Math.floor(BUDGET * 0.6), 'a') });
      const first = await ingest.ingest([big('handbook.txt')], { collection: 'docs' });
      expect(first.documents).toMatchObject([{ status: 'queued' }]);
      const second = await ingest.ingest([big('policies.txt'), { name: 'note.txt', content: Buffer.from('small') }], {
        collection: 'docs',
      });
      expect(second.documents).toMatchObject([
        { path: 'policies.txt', status: 'failed', error: { code: 'STORAGE_BUDGET_EXCEEDED' } },
        { path: 'note.txt', status: 'queued' },
      ]);
      expect(second.documents[0]!.error!.message).toMatch(/storage budget of \d+ bytes/);
      // Deleting the first document takes its bytes out: the refused one fits now.
      expect(await ingest.deleteDocument(first.documents[0]!.docId!)).toBe(true);
      const again = await ingest.ingest([big('policies.txt')], { collection: 'docs' });
      expect(again.documents).toMatchObject([{ status: 'queued' }]);
    } finally {
      await ingest.close();
    }
  });
});
