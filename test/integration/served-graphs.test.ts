import { afterEach, describe, expect, it } from 'vitest';
import { ServedGraphs } from '../../shared/store/served-graphs.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { Redis } from 'ioredis';
import { startWorker, type AgentWorker } from '../../worker/start-worker.js';
import { bearer, createTestApi, json, KEYS } from '../helpers/api-test-env.js';
import { Calls, threeStepGraph } from '../helpers/test-graphs.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { INTAKE_QUEUE } from '../../shared/contracts/queues.js';

/**
 * A run is only ever executed by a worker that has its graph. Workers announce the graphs
 * they serve; one without the graph leaves the run (it waits) instead of failing it; producers refuse a
 * graph no live worker serves, unless asked to queue it anyway.
 */
describe('served graphs', () => {
  let env: TestEnv | undefined;
  let other: AgentWorker | undefined;
  afterEach(async () => {
    await other?.close();
    await env?.close();
    other = undefined;
    env = undefined;
  });

  it('a worker without the graph leaves the run waiting, and the worker that has it runs it when it comes', async () => {
    env = await startTestEnv({ env: { AGENTQ_UNSERVED_GRAPH_WAIT_MS: '60000' } });
    const queued = await env.client.enqueue({ graph: 'three', input: {} }, { queueUnserved: true });
    const deferred = await eventually(
      async () => (await env!.client.store.eventLog.events(queued.id)).find((event) => event.type === 'step-deferred'),
      10_000,
      'a step-deferred event',
    );
    expect(String(deferred.data.reason)).toMatch(/no live worker serves graph three yet/);
    expect((await env.client.get(queued.id))?.status).toBe('queued');

    other = await startWorker({
      config: env.config,
      logger: createLogger('silent'),
      reconciler: false,
      builtInGraphs: false,
      graphs: [threeStepGraph(new Calls(), new Set())],
    });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    expect(done.output).toEqual(['a', 'b', 'c']);
  });

  it('while another live worker serves the graph, a worker without it never fails its runs', async () => {
    env = await startTestEnv({ concurrency: 4 });
    other = await startWorker({
      config: env.config,
      logger: createLogger('silent'),
      reconciler: false,
      builtInGraphs: false,
      graphs: [threeStepGraph(new Calls(), new Set())],
    });
    const runs = await Promise.all(Array.from({ length: 4 }, () => env!.client.enqueue({ graph: 'three', input: {} })));
    const finished = await Promise.all(runs.map((run) => env!.client.wait(run.id, { timeoutMs: 60_000 })));
    expect(finished.map((run) => run.status)).toEqual(runs.map(() => 'completed'));
  });

  it('the client refuses a graph no live worker serves, naming the served graphs; queued anyway it fails after the wait', async () => {
    env = await startTestEnv({ env: { AGENTQ_UNSERVED_GRAPH_WAIT_MS: '300' } });
    const refused = await env.client.enqueue({ graph: 'refund-check', input: {} }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'UNKNOWN_GRAPH' });
    expect((refused as Error).message).toMatch(
      /no live worker serves graph 'refund-check'; served: .*chain@1.*queueUnserved/,
    );

    const queued = await env.client.enqueue({ graph: 'refund-check', input: {} }, { queueUnserved: true });
    const done = await env.client.wait(queued.id, { timeoutMs: 20_000 });
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('UNKNOWN_GRAPH');
    expect(done.error?.message).toMatch(
      /unknown graph 'refund-check': no live worker served it within 300 ms \(AGENTQ_UNSERVED_GRAPH_WAIT_MS\); graphs served: .*chain@1/,
    );
  });

  it('a raw job for a known graph at a version no live worker serves (chain@9) fails with UNKNOWN_GRAPH after the wait, not deferred forever', async () => {
    env = await startTestEnv({ env: { AGENTQ_UNSERVED_GRAPH_WAIT_MS: '1500' } });
    const intake = env.queue(INTAKE_QUEUE);
    await intake.add('raw', {
      v: 1,
      graph: 'chain',
      graphVersion: '9',
      input: { steps: 1 },
      runId: 'unserved-version',
    });
    await eventually(async () => (await env!.client.get('unserved-version')) ?? undefined, 10_000, 'the run record');
    const done = await env.client.wait('unserved-version', { timeoutMs: 20_000 });
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('UNKNOWN_GRAPH');
    expect(done.error?.message).toMatch(
      /unknown graph 'chain@9': no live worker served it within 1500 ms \(AGENTQ_UNSERVED_GRAPH_WAIT_MS\); graphs served: .*chain@1/,
    );
    // It waited first (deferred, with the reason), as a run of an unknown name does.
    const events = await env.client.store.eventLog.events('unserved-version');
    expect(events.find((event) => event.type === 'step-deferred')?.data.reason).toMatch(
      /no live worker serves graph chain@9 yet/,
    );
  });

  it('entries expire: a worker that stopped heart-beating no longer counts, and a closed worker withdraws at once', async () => {
    env = await startTestEnv();
    const redis = new Redis(env.config.redisUrl!);
    try {
      const served = new ServedGraphs({ redis, keys: env.worker.store.keys, heartbeatMs: 1000 });
      const now = Date.now();
      await served.announce('w-gone', ['old-graph@1'], now - 10_000);
      expect(await served.serves('old-graph', undefined, now)).toBe(false);
      expect(await served.serves('chain', '1', now)).toBe(true);
      await env.close();
      env = undefined;
      expect((await served.live()).workers).toBe(0);
    } finally {
      redis.disconnect();
    }
  });

  it('the API answers 400 UNKNOWN_GRAPH for a graph no live worker serves, and 202 with ?queueUnserved=true', async () => {
    env = await startTestEnv();
    const app = await createTestApi({
      AGENTQ_KEY_PREFIX: env.config.keyPrefix,
      AGENTQ_QUEUE_PREFIX: env.config.queuePrefix,
    });
    try {
      const refused = await app.inject({
        method: 'POST',
        url: '/v1/runs',
        headers: bearer(KEYS.acmeProducer),
        payload: { graph: 'nope', input: {} },
      });
      expect(refused.statusCode).toBe(400);
      expect(json(refused)).toMatchObject({
        error: { code: 'UNKNOWN_GRAPH', details: { served: expect.arrayContaining(['chain@1']) } },
      });
      const queued = await app.inject({
        method: 'POST',
        url: '/v1/runs?queueUnserved=true',
        headers: bearer(KEYS.acmeProducer),
        payload: { graph: 'nope', input: {} },
      });
      expect(queued.statusCode, queued.body).toBe(202);
    } finally {
      await app.close();
    }
  });
});

describe('a worker with no Redis', () => {
  it('fails fast with a message naming the URL and what to do, instead of waiting in silence', async () => {
    const { loadConfig } = await import('../../shared/config/config.js');
    const started = Date.now();
    await expect(
      startWorker({ config: loadConfig({ REDIS_URL: 'redis://127.0.0.1:1' }), logger: createLogger('silent') }),
    ).rejects.toThrow(/cannot reach Redis at redis:\/\/127\.0\.0\.1:1 .*set REDIS_URL/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
