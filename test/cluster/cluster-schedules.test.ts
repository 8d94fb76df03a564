import { expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { isCluster } from '../../shared/redis/connect-redis.js';
import { startWorker } from '../../worker/start-worker.js';
import { clusterTestConfig } from '../helpers/redis-cluster.js';
import { describeOnCluster } from '../helpers/describe-on-cluster.js';
import { eventually } from '../helpers/test-env.js';

/**
 * Schedules and fair share on a cluster: schedules tick into runs, and fair share counts a tenant's load, with 3
 * shards.
 */
describeOnCluster('schedules and fair share on a real Redis Cluster', (cluster) => {
  it("an everyMs schedule starts one run per tick across shards; a flooding tenant's runs are raised", async () => {
    const config = clusterTestConfig(cluster, { AGENTQ_SHARDS: '3', AGENTQ_TENANT_FAIR_SHARE: '2' });
    const worker = await startWorker({ config, logger: createLogger(config.logLevel), reconciler: false });
    const acme = new AgentClient({ config, tenant: 'acme' });
    const globex = new AgentClient({ config, tenant: 'globex' });
    try {
      expect(isCluster(acme.store.redis)).toBe(true);
      const schedule = await acme.schedules.create({ graph: 'chain', input: { steps: 1 }, everyMs: 1000 });
      await eventually(
        async () => ((await acme.schedules.runs(schedule.id)) ?? []).length >= 3,
        20_000,
        'three ticks on the cluster',
      );
      const runs = (await acme.schedules.runs(schedule.id))!;
      const times = runs.map((run) => Date.parse(run.scheduledFor));
      for (let i = 1; i < times.length; i++) expect(times[i - 1]! - times[i]!).toBe(1000);
      for (const run of runs) expect((await acme.wait(run.runId, { timeoutMs: 30_000 })).status).toBe('completed');
      expect((await acme.get(runs[0]!.runId))?.scheduleId).toBe(schedule.id);
      await acme.schedules.delete(schedule.id);

      await globex.wait((await globex.enqueue({ graph: 'chain', input: { steps: 1 } })).id);
      const flood = [];
      for (let i = 0; i < 5; i++) flood.push(await acme.enqueue({ graph: 'chain', input: { steps: 1, sleepMs: 500 } }));
      const priorities = await Promise.all(flood.map(async (run) => (await acme.store.reads.get(run.id))!.priority));
      // The schedule's runs finished; the flood's third run is the first over a share of 2.
      expect(priorities.slice(0, 2)).toEqual([0, 0]);
      expect(priorities.slice(2).every((priority) => priority >= 1000)).toBe(true);
      for (const run of flood) expect((await acme.wait(run.id, { timeoutMs: 30_000 })).status).toBe('completed');
    } finally {
      await Promise.all([acme.close(), globex.close()]);
      await worker.close();
    }
  }, 90_000);
});
