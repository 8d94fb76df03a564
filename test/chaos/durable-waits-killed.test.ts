import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';

const WORKER = 'test/chaos/durable-waits-worker.ts';

/**
 * Durable waits with real crashes: the only worker is SIGKILLed while steps are parked in a sleep and in a
 * waitFor, an event is sent while no worker runs, and a new worker finishes every run once — the sleep's
 * wake-up time unchanged (not restarted), the event delivered once: 0 lost and 0 doubled wake-ups.
 */
describe('chaos: the worker killed while steps sleep or wait for an event', () => {
  const workers: ChildProcess[] = [];
  const config = testConfig();
  const client = new AgentClient({ config });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await client.close();
  });

  const parked = (runId: string) =>
    eventually(async () => (await client.store.eventLog.events(runId)).some((event) => event.type === 'step-parked'));

  it('kill -9 mid-sleep and mid-wait: a new worker completes each run once; the sleep is not restarted', async () => {
    const env = workerEnv(config, {
      SLEEP_MS: '3000',
      AGENTQ_LOCK_DURATION_MS: '2000',
      AGENTQ_STALLED_INTERVAL_MS: '1000',
    });
    const first = await spawnWorker(WORKER, env);
    workers.push(first);
    const sleeping = await Promise.all(
      Array.from({ length: 5 }, () => client.enqueue({ graph: 'sleeper', input: null })),
    );
    const key = `chaos-${Date.now()}`;
    const waiting = await Promise.all(
      Array.from({ length: 5 }, () => client.enqueue({ graph: 'waiter', input: { name: 'go', key } })),
    );
    for (const run of [...sleeping, ...waiting]) await parked(run.id);
    const waitsKey = (runId: string) => client.store.keys.runWaits(runId).waits;
    const untilBefore = await Promise.all(
      sleeping.map((run) => client.store.redis.hget(waitsKey(run.id), 'u:s0.t0:0')),
    );
    expect(untilBefore.every((until) => until !== null)).toBe(true);

    await killHard(first);
    expect(first.signalCode).toBe('SIGKILL');
    // Sent while no worker runs: recorded on each run at once, the steps promoted for whoever comes next.
    const sent = await client.sendEvent({ key, name: 'go', data: { n: 1 } });
    expect(sent.reached).toBe(5);
    workers.push(await spawnWorker(WORKER, env));

    const done = await Promise.all([...sleeping, ...waiting].map((run) => client.wait(run.id)));
    expect(done.map((run) => run.status)).toEqual(done.map(() => 'completed'));
    for (const [index, run] of sleeping.entries()) {
      const output = done[index]!.output as { sleptAt: number; wokeAt: number };
      // The wake-up time fixed at the first call is the one the new worker honoured.
      expect(await client.store.redis.hget(waitsKey(run.id), 'u:s0.t0:0')).toBe(untilBefore[index]);
      expect(output.wokeAt).toBeGreaterThanOrEqual(Number(untilBefore[index]));
    }
    for (const [index] of waiting.entries())
      expect(done[sleeping.length + index]!.output).toEqual({ data: { n: 1 }, key });
    // Each run committed its one step once: no doubled wake-up ran the node to a second commit.
    for (const run of [...sleeping, ...waiting]) {
      const ends = (await client.store.eventLog.events(run.id)).filter((event) => event.type === 'step-end');
      expect(ends).toHaveLength(1);
    }
    // A second event reaches none: every wait has its outcome.
    expect((await client.sendEvent({ key, name: 'go', data: { n: 2 } })).reached).toBe(0);
  });
});
