import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Queue } from 'bullmq';
import { AgentClient } from '../../producer/client/agent-client.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { FAIR_REBASE_AT, FAIR_STRIDE, FairQueue, fairPriorities } from '../../shared/store/fair-queue.js';
import { parseTenantWeights, type TenantWeights } from '../../shared/config/tenant-weights.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { isTerminal } from '../../shared/contracts/run-record.js';

const RUNS = 16;
const STEPS = 12;

function weights(text: string): TenantWeights {
  const read = parseTenantWeights(text);
  if (!('weights' in read)) throw new Error(read.problem);
  return read.weights;
}

/**
 * Both tenants flood (RUNS runs of STEPS steps each, more than the worker's two slots): → the steps each
 * tenant's runs committed once `window` steps were committed in all, while both still had runs waiting.
 */
async function floodBoth(env: TestEnv, clients: Record<'acme' | 'beta', AgentClient>, window: number) {
  const ids: Record<'acme' | 'beta', string[]> = { acme: [], beta: [] };
  for (const tenant of ['acme', 'beta'] as const)
    for (let i = 0; i < RUNS; i++)
      ids[tenant].push((await clients[tenant].enqueue({ graph: 'chain', input: { steps: STEPS, sleepMs: 20 } })).id);
  // Steps committed by a tenant's runs, and how many of them are not finished.
  const progress = async (tenant: 'acme' | 'beta') => {
    const metas = await Promise.all(ids[tenant].map((id) => env.client.store.reads.get(id)));
    return {
      steps: metas.reduce((sum, meta) => sum + (meta?.stepCount ?? 0), 0),
      unfinished: metas.filter((meta) => meta && !isTerminal(meta.status)).length,
    };
  };
  let seen = { acme: { steps: 0, unfinished: 0 }, beta: { steps: 0, unfinished: 0 } };
  await eventually(
    async () => {
      seen = { acme: await progress('acme'), beta: await progress('beta') };
      return seen.acme.steps + seen.beta.steps >= window;
    },
    60_000,
    `${window} steps committed`,
  );
  // Contention held through the window: neither tenant had finished its flood.
  expect(seen.acme.unfinished, 'acme runs left').toBeGreaterThan(0);
  expect(seen.beta.unfinished, 'beta runs left').toBeGreaterThan(0);
  const counts = { acme: seen.acme.steps, beta: seen.beta.steps };
  for (const id of [...ids.acme, ...ids.beta]) await env.client.cancel(id).catch(() => undefined);
  return { counts, ids };
}

/** A test env whose worker runs with `vars`, and a client for each of the two tenants; closed after the suite. */
function twoTenants(vars: Record<string, string>) {
  const suite = {} as { env: TestEnv; clients: Record<'acme' | 'beta', AgentClient> };
  beforeAll(async () => {
    suite.env = await startTestEnv({ env: vars, concurrency: 2 });
    suite.clients = {
      acme: new AgentClient({ config: suite.env.config, tenant: 'acme' }),
      beta: new AgentClient({ config: suite.env.config, tenant: 'beta' }),
    };
  });
  afterAll(async () => {
    await Promise.all(Object.values(suite.clients).map((client) => client.close()));
    await suite.env.close();
  });
  return suite;
}

/** Weighted fairness between tenants (AGENTQ_TENANT_WEIGHTS): step jobs served in proportion to the weights. */
describe('weighted fairness between tenants', () => {
  const suite = twoTenants({ AGENTQ_TENANT_WEIGHTS: 'acme:3,beta:1' });

  it('two tenants flooding at weights 3:1 get step completions in about that proportion', async () => {
    const { counts } = await floodBoth(suite.env, suite.clients, 160);
    const ratio = counts.acme / Math.max(1, counts.beta);
    expect(ratio, JSON.stringify(counts)).toBeGreaterThan(2);
    expect(ratio, JSON.stringify(counts)).toBeLessThan(4.5);
  });

  it("the script's decisions are the pure function's, and past the rebase point waiting jobs move down with the passes", async () => {
    const redis = suite.env.client.store.redis;
    const keys = suite.env.client.store.keys;
    const fair = new FairQueue(keys, weights('acme:3,beta:1'));
    const prefix = `${suite.env.config.queuePrefix}-fairtest`;
    const queue = new Queue(STEP_QUEUE, {
      connection: { url: suite.env.config.redisUrl!, maxRetriesPerRequest: null },
      prefix,
    });
    const queuePrefix = `${prefix}:${STEP_QUEUE}:`;
    try {
      const runId = 'fair-decisions-run';
      const key = fair.key(keys.shardOf(runId));
      await redis.del(key);
      // Nothing waits: no priority, no pass.
      expect(await fair.priorities(redis, { runId, tenant: 'acme', priority: 0 }, queuePrefix, 1)).toEqual([0]);
      expect(await redis.exists(key)).toBe(0);
      await queue.add('step', {}, { jobId: 'waiting-1', priority: 1 });
      let state = { virtual: 0, passes: {} as Record<string, number> };
      for (const [tenant, weight, own, count] of [
        ['acme', 3, 0, 3],
        ['beta', 1, 0, 2],
        ['acme', 3, 2, 1],
      ] as const) {
        const expected = fairPriorities(state, { tenant, weight, own, count, queued: true, head: 1 });
        state = expected.state;
        expect(await fair.priorities(redis, { runId, tenant, priority: own }, queuePrefix, count)).toEqual(
          expected.priorities,
        );
      }
      const stored = await redis.hgetall(key);
      expect(Number(stored['t:acme'])).toBeCloseTo(state.passes.acme!, 6);
      expect(Number(stored['t:beta'])).toBeCloseTo(state.passes.beta!, 6);

      // Near the top of BullMQ's range: a waiting job, the virtual time and a pass all move down together.
      await queue.add('step', {}, { jobId: 'waiting-high', priority: FAIR_REBASE_AT + 500 });
      await queue.remove('waiting-1');
      await redis.hset(key, 'v', FAIR_REBASE_AT + 100, 't:acme', FAIR_REBASE_AT + 1000);
      const [beta] = await fair.priorities(redis, { runId, tenant: 'beta', priority: 0 }, queuePrefix, 1);
      const shift = FAIR_REBASE_AT + 499;
      expect(beta).toBe(1);
      expect((await queue.getJob('waiting-high'))?.priority).toBe(500 - 499);
      expect(await redis.hgetall(key)).toEqual({
        v: '0',
        't:acme': String(FAIR_REBASE_AT + 1000 - shift),
        't:beta': String(FAIR_STRIDE),
      });
    } finally {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    }
  });
});

/** Weights off (the default): the runs keep their own priorities, AGENTQ_TENANT_FAIR_SHARE's raise stands. */
describe('weighted fairness off', () => {
  const suite = twoTenants({ AGENTQ_TENANT_FAIR_SHARE: '4' });

  it('writes no fair hash, and step jobs carry the priority fixed at creation', async () => {
    const { ids } = await floodBoth(suite.env, suite.clients, 60);
    const keys = suite.env.client.store.keys;
    const fair = new FairQueue(keys, undefined);
    expect(fair.on).toBe(false);
    expect(await suite.env.client.store.redis.exists(fair.key(0))).toBe(0);
    // The fair share's raise, fixed when the run was created: the fifth run and later ones of beta, which
    // flooded second (with two tenants known; acme's came while it was the only one, no one to be fair to).
    const metas = await Promise.all(ids.beta.map((id) => suite.env.client.store.reads.get(id)));
    expect(metas.slice(0, 4).map((meta) => meta?.priority)).toEqual([0, 0, 0, 0]);
    expect(metas[4]?.priority).toBe(1000);
    await eventually(
      async () => (await suite.env.queue(STEP_QUEUE).getJobCounts('active', 'waiting', 'prioritized')).active === 0,
      30_000,
      'the cancelled runs to drain',
    );
  });
});
