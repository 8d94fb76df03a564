import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';
import { startRestartableRedis, type RestartableRedis } from './redis-restartable.js';

const WORKER = 'test/chaos/durable-waits-worker.ts';

/**
 * Parked steps with Redis SIGKILLed (AOF on, appendfsync everysec) and restarted on the same data: runs
 * sleeping, runs waiting for an event and parents waiting for their children (which wait for an answer)
 * are all parked when Redis dies. After the restart the event is sent and the children answered; every
 * run completes once, each step ends once (0 doubled wake-ups) and none is left parked (0 lost).
 */
describe('chaos: Redis killed while steps sleep, wait for an event or wait for children', () => {
  const workers: ChildProcess[] = [];
  let redis: RestartableRedis | undefined;
  let client: AgentClient | undefined;
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await client?.close();
    await redis?.close();
  });

  it('kill -9 of Redis with parked runs: each completes once, every step ends once', async () => {
    redis = await startRestartableRedis();
    const config = testConfig({ REDIS_URL: redis.url });
    const agent = new AgentClient({ config });
    client = agent;
    workers.push(await spawnWorker(WORKER, workerEnv(config, { SLEEP_MS: '8000' })));

    const sleeping = await Promise.all(
      Array.from({ length: 5 }, () => agent.enqueue({ graph: 'sleeper', input: null })),
    );
    const key = `redis-chaos-${Date.now()}`;
    const waiting = await Promise.all(
      Array.from({ length: 5 }, () => agent.enqueue({ graph: 'waiter', input: { name: 'go', key } })),
    );
    const parents = await Promise.all(
      Array.from({ length: 2 }, () => agent.enqueue({ graph: 'parent-sum', input: { ns: [1, 2], mode: 'ask' } })),
    );
    const all = [...sleeping, ...waiting, ...parents];
    for (const run of all)
      await eventually(async () =>
        (await agent.store.eventLog.events(run.id)).some((event) => event.type === 'step-parked'),
      );
    const children = (await Promise.all(parents.map((parent) => agent.children(parent.id)))).flatMap(
      (page) => page.children,
    );
    expect(children).toHaveLength(4);
    for (const child of children)
      await eventually(async () => ((await agent.get(child.runId))?.status === 'waiting' ? true : undefined));

    // appendfsync everysec: what was written a second and more ago is on disk when Redis dies.
    await sleep(1500);
    await redis.kill();
    await redis.start();

    const sent = await eventually(async () => agent.sendEvent({ key, name: 'go', data: { n: 1 } }));
    expect(sent.reached).toBe(5);
    for (const child of children) await eventually(async () => agent.resume(child.runId, 'yes'));

    const done = await Promise.all(all.map((run) => agent.wait(run.id, { timeoutMs: 120_000 })));
    expect(done.map((run) => run.status)).toEqual(done.map(() => 'completed'));
    for (const [index] of waiting.entries())
      expect(done[sleeping.length + index]!.output).toEqual({ data: { n: 1 }, key });
    for (const [index] of parents.entries())
      expect(done[sleeping.length + waiting.length + index]!.output).toMatchObject({ sum: 6, error: null });
    // Each run's one step ended once: no wake-up ran a parked node to a second commit.
    for (const run of [...all, ...children.map((child) => ({ id: child.runId }))]) {
      const events = await agent.store.eventLog.events(run.id);
      expect(events.filter((event) => event.type === 'step-end')).toHaveLength(1);
      expect(events.filter((event) => event.type === 'run-end')).toHaveLength(1);
    }
    expect((await agent.sendEvent({ key, name: 'go', data: { n: 2 } })).reached).toBe(0);
  }, 240_000);
});
