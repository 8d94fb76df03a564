import { Queue } from 'bullmq';
import type { InjectOptions } from 'fastify';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import type { Config } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { INTAKE_QUEUE } from '../../shared/contracts/queues.js';
import { startWorker, type AgentWorker } from '../../worker/start-worker.js';
import { API_KEYS_ENV, bearer, json, KEYS } from '../helpers/api-test-env.js';
import { parseSseFrames } from '../helpers/api-sse.js';
import { startWebhookReceiver } from '../helpers/api-webhook-receiver.js';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { multipart } from '../helpers/multipart-body.js';
import { clusterTestConfig } from '../helpers/redis-cluster.js';
import { describeOnCluster } from '../helpers/describe-on-cluster.js';
import { eventually } from '../helpers/test-env.js';

interface RunBody {
  id: string;
  status: string;
}

/**
 * The HTTP API, batches, ingestion + search and a raw job from another service, on a real Redis Cluster
 * with AGENTQ_SHARDS=3: every cross-slot read (a tenant's run list, batch progress, /metrics, purge)
 * works by design (per-slot pipelines), with no CROSSSLOT error; so do SSE, webhooks and Bull Board.
 */
describeOnCluster('the API on a real Redis Cluster (3 masters + 3 replicas, 3 shards)', (cluster) => {
  const data = tempDirectory('agentq-cluster-api-');
  let config: Config;
  let worker: AgentWorker;
  let app: ApiInstance;
  let client: AgentClient;
  const as = (key: string, options: InjectOptions) =>
    app.inject({ ...options, headers: { ...bearer(key), ...(options.headers ?? {}) } });
  const finished = (key: string, id: string) =>
    eventually(
      async () => {
        const body = json<RunBody>(await as(key, { method: 'GET', url: `/v1/runs/${id}` }));
        return ['completed', 'failed', 'cancelled'].includes(body.status) && body;
      },
      30_000,
      `run ${id}`,
    );

  beforeAll(async () => {
    config = clusterTestConfig(cluster, {
      AGENTQ_API_KEYS: API_KEYS_ENV,
      AGENTQ_SHARDS: '3',
      AGENTQ_DATA_DIR: data.path,
      AGENTQ_WEBHOOK_ALLOW_PRIVATE: 'true',
      AGENTQ_WEBHOOK_SECRETS: '*:cluster-test-secret',
    });
    worker = await startWorker({
      config,
      logger: createLogger(config.logLevel),
      graphs: [echoRagGraph()],
      reconciler: false,
    });
    app = await createApi({ config, logger: createLogger(config.logLevel) });
    client = new AgentClient({ config });
  });
  afterAll(async () => {
    await app?.close();
    await client?.close();
    await worker?.close();
    data.remove();
  });

  it('two tenants: each lists only its own runs (spread over the shards), a foreign id answers 404, purge works', async () => {
    const post = (key: string, index: number) =>
      as(key, {
        method: 'POST',
        url: '/v1/runs',
        payload: { graph: 'chain', input: { steps: 2 } },
        headers: { 'idempotency-key': `k-${index}` },
      });
    const acme = await Promise.all([0, 1, 2, 3, 4, 5].map((index) => post(KEYS.acmeProducer, index)));
    const globex = await Promise.all([0, 1, 2].map((index) => post(KEYS.globexProducer, index)));
    for (const response of [...acme, ...globex]) expect(response.statusCode).toBe(202);
    const acmeIds = acme.map((response) => json<RunBody>(response).id);
    const globexIds = globex.map((response) => json<RunBody>(response).id);
    expect(new Set(acmeIds.map((id) => client.store.keys.shardOf(id))).size).toBeGreaterThan(1);
    for (const id of acmeIds) expect((await finished(KEYS.acmeProducer, id)).status).toBe('completed');
    for (const id of globexIds) expect((await finished(KEYS.globexProducer, id)).status).toBe('completed');

    const acmeList = json<{ runs: RunBody[] }>(
      await as(KEYS.acmeProducer, { method: 'GET', url: '/v1/runs?limit=50' }),
    );
    expect(new Set(acmeList.runs.map((run) => run.id))).toEqual(new Set(acmeIds));
    const filtered = json<{ runs: RunBody[] }>(
      await as(KEYS.globexProducer, { method: 'GET', url: '/v1/runs?status=completed&graph=chain' }),
    );
    expect(new Set(filtered.runs.map((run) => run.id))).toEqual(new Set(globexIds));
    expect((await as(KEYS.globexProducer, { method: 'GET', url: `/v1/runs/${acmeIds[0]}` })).statusCode).toBe(404);

    const purged = await as(KEYS.acmeProducer, { method: 'DELETE', url: `/v1/runs/${acmeIds[0]}?purge=true` });
    expect(purged.statusCode).toBe(204);
    expect((await as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${acmeIds[0]}` })).statusCode).toBe(404);

    const metrics = await app.inject({ method: 'GET', url: '/metrics', headers: bearer(KEYS.acmeAdmin) });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/agentq_runs_finished_total\{status="completed"\} (\d+)/);
    expect(
      Number(/agentq_runs_finished_total\{status="completed"\} (\d+)/.exec(metrics.body)![1]),
    ).toBeGreaterThanOrEqual(9);
  });

  it('events over SSE, a webhook delivery and Bull Board (every shard queue) work on the cluster too', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const created = await as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/runs',
        payload: { graph: 'chain', input: { steps: 2 }, webhookUrl: receiver.url },
      });
      const { id } = json<RunBody>(created);
      // The event stream (XREAD BLOCK on a Cluster connection of its own) ends after run-end.
      const events = parseSseFrames(
        (await as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${id}/events` })).body,
      ).map((frame) => frame.event);
      expect(events[0]).toBe('run-start');
      expect(events.at(-1)).toBe('run-end');
      await eventually(async () => receiver.received.length > 0, 30_000, 'the webhook delivery');
      expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({ id, status: 'completed' });
    } finally {
      await receiver.close();
    }
    const board = await app.inject({ method: 'GET', url: '/admin/queues/api/queues', headers: bearer(KEYS.acmeAdmin) });
    expect(board.statusCode).toBe(200);
    const names = json<{ queues: { name: string }[] }>(board).queues.map((queue) => queue.name);
    expect(names).toEqual(
      expect.arrayContaining([
        's0-agentq-steps',
        's1-agentq-steps',
        's2-agentq-steps',
        'agentq-runs',
        'agentq-ingest',
        'agentq-webhooks',
      ]),
    );
  });

  it('a batch of questions runs to completion with its progress and results', async () => {
    const created = await as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/batches',
      headers: { 'idempotency-key': 'cluster-batch' },
      payload: {
        collection: 'docs',
        questions: [1, 2, 3, 4, 5].map((index) => ({ id: `q${index}`, question: `question ${index}` })),
        options: { concurrency: 2, graph: 'echo-rag' },
      },
    });
    expect(created.statusCode).toBe(202);
    const { id } = json<{ id: string }>(created);
    const done = await eventually(
      async () => {
        const body = json<{
          status: string;
          progress: Record<string, number>;
          results?: { id: string; answer: string | null }[];
        }>(await as(KEYS.acmeProducer, { method: 'GET', url: `/v1/batches/${id}` }));
        return body.status !== 'running' && body;
      },
      30_000,
      'the batch',
    );
    expect(done.status).toBe('completed');
    expect(done.progress).toMatchObject({ total: 5, completed: 5 });
    expect(done.results?.map((result) => result.answer)).toEqual(
      [1, 2, 3, 4, 5].map((index) => `echo: question ${index}`),
    );
    expect((await as(KEYS.globexProducer, { method: 'GET', url: `/v1/batches/${id}` })).statusCode).toBe(404);
  });

  it('ingests documents and searches them, per tenant', async () => {
    const upload = multipart({ collection: 'handbook' }, [
      { name: 'policies.md', content: '# Policies\n\nEmployees may bring a ferret to the office on Fridays.\n' },
    ]);
    const accepted = await as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/documents',
      headers: upload.headers,
      payload: upload.payload,
    });
    expect(accepted.statusCode).toBe(202);
    const { batchId } = json<{ batchId: string }>(accepted);
    const progress = await eventually(
      async () => {
        const body = json<{ finished: boolean; done: number }>(
          await as(KEYS.acmeProducer, { method: 'GET', url: `/v1/documents/batches/${batchId}` }),
        );
        return body.finished && body;
      },
      30_000,
      'indexing',
    );
    expect(progress.done).toBe(1);
    const search = await as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/search',
      payload: { query: 'can I bring my ferret?', collection: 'handbook', k: 3 },
    });
    expect(search.statusCode).toBe(200);
    expect(json<{ hits: { text: string }[] }>(search).hits[0]?.text).toContain('ferret');
    expect(
      json<{ hits: unknown[] }>(
        await as(KEYS.globexProducer, { method: 'POST', url: '/v1/search', payload: { query: 'ferret' } }),
      ).hits,
    ).toEqual([]);
  });

  it('a raw job from another service (plain BullMQ on its own Cluster connection) on the intake queue the docs name', async () => {
    // What docs/guides/enqueue-from-another-service.md ("On a Redis Cluster") tells another service: queue `agentq-runs`, prefix AGENTQ_QUEUE_PREFIX.
    const connection = new Cluster(
      cluster.seeds.split(',').map((seed) => ({ host: seed.split(':')[0]!, port: Number(seed.split(':')[1]) })),
      { redisOptions: { maxRetriesPerRequest: null } },
    );
    const intake = new Queue(INTAKE_QUEUE, { connection, prefix: config.queuePrefix });
    try {
      await intake.add(
        'run',
        { v: 1, graph: 'chain', input: { steps: 3 }, runId: 'raw-order-42', tenant: 'acme' },
        { attempts: 5, removeOnComplete: true },
      );
      const record = await eventually(
        async () => {
          const run = await client.get('raw-order-42');
          return run?.status === 'completed' && run;
        },
        30_000,
        'the raw job run',
      );
      expect(record.stepCount).toBe(3);
    } finally {
      await intake.close();
      connection.disconnect();
    }
  });
});
