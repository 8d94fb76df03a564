import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { fairPriority, FAIR_SHARE_STEP } from '../../shared/operations/limits/fair-share.js';
import { MAX_PRIORITY } from '../../shared/contracts/job-schema.js';
import { INTAKE_QUEUE } from '../../shared/contracts/queues.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

describe('fairPriority', () => {
  it("keeps a run's own priority within the share and raises it one step per share held beyond", () => {
    expect(fairPriority(0, 2, 3)).toBe(0);
    expect(fairPriority(7, 2, 3)).toBe(7);
    expect(fairPriority(0, 3, 3)).toBe(FAIR_SHARE_STEP);
    expect(fairPriority(7, 7, 3)).toBe(7 + 2 * FAIR_SHARE_STEP);
    expect(fairPriority(0, 1_000_000_000, 3)).toBe(MAX_PRIORITY);
    expect(fairPriority(0, 500, 0)).toBe(0);
  });
});

/** Fair share: a tenant's flood of runs queues behind other tenants' runs (AGENTQ_TENANT_FAIR_SHARE). */
describe('fair share between tenants', () => {
  let env: TestEnv;
  let acme: AgentClient;
  let globex: AgentClient;
  beforeAll(async () => {
    env = await startTestEnv({ env: { AGENTQ_TENANT_FAIR_SHARE: '3' }, concurrency: 2 });
    acme = new AgentClient({ config: env.config, tenant: 'acme' });
    globex = new AgentClient({ config: env.config, tenant: 'globex' });
  });
  afterAll(async () => {
    await Promise.all([acme.close(), globex.close()]);
    await env.close();
  });

  const priorityOf = async (runId: string) => (await env.client.store.reads.get(runId))!.priority;

  it("a deployment with one tenant keeps its runs' own priorities (no one to be fair to)", async () => {
    const alone = [];
    for (let i = 0; i < 5; i++) alone.push(await acme.enqueue({ graph: 'chain', input: { steps: 1 } }));
    expect(await Promise.all(alone.map((run) => priorityOf(run.id)))).toEqual([0, 0, 0, 0, 0]);
    await Promise.all(alone.map((run) => env.client.wait(run.id)));
    await eventually(
      async () => (await env.client.store.redis.zcard(env.client.store.keys.tenantLoad('acme'))) === 0,
      10_000,
      'the load to drain',
    );
  });

  it("runs beyond a tenant's share get a priority that puts them behind other tenants' runs, and are served after them", async () => {
    await env.client.wait((await globex.enqueue({ graph: 'chain', input: { steps: 1 } })).id);
    const flood = [];
    for (let i = 0; i < 8; i++) flood.push(await acme.enqueue({ graph: 'chain', input: { steps: 2, sleepMs: 300 } }));
    expect(await Promise.all(flood.map((run) => priorityOf(run.id)))).toEqual([
      0,
      0,
      0,
      FAIR_SHARE_STEP,
      FAIR_SHARE_STEP,
      FAIR_SHARE_STEP,
      2 * FAIR_SHARE_STEP,
      2 * FAIR_SHARE_STEP,
    ]);
    // Another tenant within its share keeps its runs' own priority (none: BullMQ's wait list, served first).
    const other = await globex.enqueue({ graph: 'chain', input: { steps: 2, sleepMs: 300 } });
    expect(await priorityOf(other.id)).toBe(0);
    // A raw job of the flooding tenant is counted the same way.
    const intake = env.queue(INTAKE_QUEUE);
    await intake.add('run', { v: 1, graph: 'chain', input: { steps: 1 }, tenant: 'acme', runId: 'fair-raw-1' });
    await eventually(
      async () => (await env.client.store.reads.get('fair-raw-1')) !== null,
      15_000,
      "the raw job's run",
    );
    expect(await priorityOf('fair-raw-1')).toBe(2 * FAIR_SHARE_STEP); // 8 held, share 3: two whole shares

    const otherDone = await env.client.wait(other.id, { timeoutMs: 60_000 });
    expect(otherDone.status).toBe('completed');
    // Served ahead of the flood's raised runs: it finished before the last of them started to finish.
    const floodDone = await Promise.all(flood.map((run) => env.client.wait(run.id, { timeoutMs: 60_000 })));
    const lastRaised = floodDone.slice(3).map((run) => Date.parse(run.updatedAt));
    expect(Date.parse(otherDone.updatedAt)).toBeLessThan(Math.max(...lastRaised));
    expect(floodDone.filter((run) => run.status === 'completed')).toHaveLength(8);
    await env.client.wait('fair-raw-1', { timeoutMs: 60_000 });

    // Finished runs leave the load: the tenant's next run is within its share again.
    await eventually(
      async () => (await env.client.store.redis.zcard(env.client.store.keys.tenantLoad('acme'))) === 0,
      10_000,
      'the load to drain',
    );
    const next = await acme.enqueue({ graph: 'chain', input: { steps: 1 } });
    expect(await priorityOf(next.id)).toBe(0);
    await env.client.wait(next.id);
  });

  it("a batch's questions are not counted (the batch holds them to its concurrency)", async () => {
    const { batch } = await acme.batches.submit(
      {
        questions: Array.from({ length: 6 }, (_unused, i) => ({ question: `q${i}` })),
        options: { graph: 'chain', concurrency: 6 },
      },
      { tenant: 'acme' },
    );
    expect(batch.id).toBeDefined();
    expect(await env.client.store.redis.zcard(env.client.store.keys.tenantLoad('acme'))).toBe(0);
    await acme.batches.cancel(batch.id);
  });
});
