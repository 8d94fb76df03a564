import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/agent-client.js';
import { testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';

const RUNS = 60;
const STEPS = 12;
const WORKERS = 3;

/**
 * Invariants I1 and I2 under fire: real worker processes SIGKILLed at random moments while 60 chain
 * runs are in flight, and restarted. Every run must complete with `visited` exactly [0..N-1], no step
 * committed twice, and no step started again after it was committed.
 */
describe('chaos: workers killed with SIGKILL mid-run', () => {
  const config = testConfig({ AGENTQ_RECONCILE_INTERVAL_MS: '2000', AGENTQ_RECONCILE_AFTER_MS: '10000' });
  const env: Record<string, string> = {
    REDIS_URL: config.redisUrl!,
    AGENTQ_KEY_PREFIX: config.keyPrefix,
    AGENTQ_QUEUE_PREFIX: config.queuePrefix,
    AGENTQ_WORKER_CONCURRENCY: '4',
    AGENTQ_RECONCILE_INTERVAL_MS: '2000',
    AGENTQ_RECONCILE_AFTER_MS: '10000',
    AGENTQ_LOG_LEVEL: 'error',
  };
  const client = new AgentClient({ config });
  const workers: (ChildProcess | undefined)[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker && killHard(worker)));
    await client.close();
  });

  it('every run completes exactly once per step (I1, I2)', async () => {
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
    let state = seed;
    const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    console.log(`chaos seed=${seed} (CHAOS_SEED=${seed} reproduces the kill schedule)`);

    for (let index = 0; index < WORKERS; index += 1) workers.push(await spawnWorker('test/chaos/chain-worker.ts', env));
    const runs = await Promise.all(
      Array.from({ length: RUNS }, (_, index) => client.enqueue({ graph: 'chain', input: { steps: STEPS, sleepMs: 200 + (index % 5) * 50 }, runId: `chaos-${seed}-${index}` })),
    );

    // Kill while at least 50 runs are in flight (at most 30 s).
    const inFlight = async () => (await Promise.all(runs.map((run) => client.get(run.id)))).filter((record) => record && !['completed', 'failed', 'cancelled'].includes(record.status)).length;
    let kills = 0;
    const killUntil = Date.now() + 30_000;
    while (Date.now() < killUntil) {
      await new Promise((resolve) => setTimeout(resolve, 400 + random() * 800));
      const flying = await inFlight();
      if (flying < 50) break;
      const victim = Math.floor(random() * WORKERS);
      await killHard(workers[victim]!);
      kills += 1;
      console.log(`chaos kill #${kills}: worker ${victim}, ${flying} runs in flight`);
      workers[victim] = await spawnWorker('test/chaos/chain-worker.ts', env);
    }

    const finished = await Promise.all(runs.map((run) => client.wait(run.id, { timeoutMs: 90_000 })));
    const problems: string[] = [];
    for (const record of finished) {
      if (record.status !== 'completed') problems.push(`${record.id}: ${record.status} ${JSON.stringify(record.error)}`);
      const visited = (record.output as { visited?: number[] } | null)?.visited;
      if (JSON.stringify(visited) !== JSON.stringify([...Array(STEPS).keys()])) problems.push(`${record.id}: visited ${JSON.stringify(visited)}`);
      const steps = await client.steps(record.id);
      const supersteps = steps.map((step) => step.superstep);
      if (JSON.stringify(supersteps) !== JSON.stringify([...Array(STEPS).keys()])) problems.push(`${record.id}: committed supersteps ${JSON.stringify(supersteps)}`);
      // I1: after step-end of superstep k, no step-start of k ever appears.
      const committed = new Set<number>();
      for (const event of await client.store.events(record.id, { count: 10_000 })) {
        const superstep = Number(event.data.superstep);
        if (event.type === 'step-end') committed.add(superstep);
        if (event.type === 'step-start' && committed.has(superstep)) problems.push(`${record.id}: superstep ${superstep} started after its commit`);
      }
    }
    expect(kills).toBeGreaterThanOrEqual(5);
    expect(problems).toEqual([]);
  }, 240_000);
});
