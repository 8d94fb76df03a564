import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTAKE_QUEUE, STEP_QUEUE } from '../../shared/contracts/queues.js';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { eventually } from '../helpers/test-env.js';

/** A run's priority from every way in: API, raw job, batch default; bad values named. */
describe('run priority', () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [echoRagGraph()] });
  });
  afterAll(async () => env.close());

  it('POST /v1/runs with a priority: the run and its step jobs carry it', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'chain', input: { steps: 2 }, priority: 7 },
    });
    expect(created.statusCode).toBe(202);
    const id = json(created).id as string;
    expect((await env.client.wait(id)).status).toBe('completed');
    expect((await env.client.store.reads.get(id))?.priority).toBe(7);
    const job = await env.queue(STEP_QUEUE, id).getJob(`${id}.s1.t0`);
    expect(job?.priority).toBe(7);
  });

  it.each([0, -1, 2.5, 3_000_000, '1'])('a priority of %j is a 400 that names the field', async (priority) => {
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'chain', input: { steps: 1 }, priority },
    });
    expect(response.statusCode).toBe(400);
    expect(JSON.stringify(json(response))).toMatch(/priority/);
  });

  it('a raw job schema v1 with a priority starts a run with that priority', async () => {
    const intake = new Queue(INTAKE_QUEUE, {
      connection: { url: env.config.redisUrl!, maxRetriesPerRequest: null },
      prefix: env.config.queuePrefix,
    });
    try {
      await intake.add('run', { v: 1, graph: 'chain', input: { steps: 1 }, runId: 'raw-priority-1', priority: 3 });
      await eventually(
        async () => (await env.client.get('raw-priority-1')) !== null,
        15_000,
        'the intake to create the run',
      );
      const record = await env.client.wait('raw-priority-1');
      expect(record.status).toBe('completed');
      expect((await env.client.store.reads.get('raw-priority-1'))?.priority).toBe(3);
    } finally {
      await intake.close();
    }
  });

  it('a batch runs its questions at priority 100 by default, behind runs without one; options.priority overrides it', async () => {
    const post = async (options: Record<string, unknown>) =>
      json(
        await env.as(KEYS.acmeProducer, {
          method: 'POST',
          url: '/v1/batches',
          payload: {
            collection: 'docs',
            questions: [{ question: 'first' }],
            options: { graph: 'echo-rag', ...options },
          },
        }),
      ).id as string;
    const results = async (batchId: string) =>
      eventually(async () => {
        const body = json<{ status: string; results?: { runId: string }[] }>(
          await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/batches/${batchId}` }),
        );
        return body.status === 'completed' && body.results;
      }, 20_000);
    const [byDefault] = await results(await post({}));
    expect((await env.client.store.reads.get(byDefault!.runId))?.priority).toBe(100);
    const [chosen] = await results(await post({ priority: 2 }));
    expect((await env.client.store.reads.get(chosen!.runId))?.priority).toBe(2);
  });
});
