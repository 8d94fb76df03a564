import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { ChildLinks } from '../../shared/store/child-links.js';
import { testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';

/**
 * Child runs with real crashes: the worker is SIGKILLed while the parent's step parks (its children
 * created, its job not yet delayed) and while a child runs under a parked parent. A second worker carries
 * on: every child is created once, every parent completes once with their outputs.
 */
describe('chaos: workers killed around child runs', () => {
  const workers: ChildProcess[] = [];
  const clients: AgentClient[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await Promise.all(clients.map((client) => client.close()));
  });

  it.each(['parent-parking', 'child-running'])(
    'killed %s: one child per call, the parent completes once',
    async (point) => {
      const config = testConfig();
      const client = new AgentClient({ config });
      clients.push(client);
      const env = workerEnv(config, {
        AGENTQ_LOCK_DURATION_MS: '2000',
        AGENTQ_STALLED_INTERVAL_MS: '1000',
        // Long: the parent must be woken by its children's ends, not by its park delay.
        AGENTQ_CHILD_RUN_PARK_MS: '600000',
      });
      const killer = await spawnWorker('test/chaos/child-runs-kill-worker.ts', { ...env, KILL_AT: point });
      workers.push(killer);
      const died = new Promise<void>((resolve) => killer.once('exit', () => resolve()));
      const parent = await client.enqueue({ graph: 'parent-sum', input: { ns: [1, 2, 3] } });
      await died;
      expect(killer.signalCode).toBe('SIGKILL');
      workers.push(await spawnWorker('test/chaos/child-runs-kill-worker.ts', env));
      const done = await client.wait(parent.id, { timeoutMs: 90_000 });
      expect(done).toMatchObject({ status: 'completed', output: { sum: 12, error: null } });
      const page = await new ChildLinks(client.store.redis, client.store.keys).list(parent.id);
      expect(page.total).toBe(3);
      // No child created twice: the tenant holds the parent and exactly its three children.
      const { runs } = await client.list({ limit: 100 });
      expect(
        runs
          .filter((run) => run.graph === 'child-double')
          .map((run) => run.id)
          .sort(),
      ).toEqual(page.children.map((child) => child.runId).sort());
      expect(runs.filter((run) => run.graph === 'child-double').every((run) => run.status === 'completed')).toBe(true);
      // Completed once: one committed step, one run-end.
      expect((await client.steps(parent.id)).map((step) => step.node)).toEqual(['call']);
      const events = await client.store.eventLog.events(parent.id);
      expect(events.filter((event) => event.type === 'run-end')).toHaveLength(1);
      await Promise.all(workers.splice(0).map((worker) => killHard(worker)));
    },
    150_000,
  );
});
