import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { shardOf, stepQueuePrefix } from '../../shared/contracts/shards.js';
import { auditRun, stepKey } from '../helpers/run-audit.js';
import { testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';

/**
 * Engine v2's new failure point: a worker dies after a step's transition script committed the step and
 * handed the worker the next step's job (eagerly: active, locked by the dead worker), before that step
 * runs. BullMQ's stalled-job check must give the job to another worker after the lock lapses, and every
 * step must still commit exactly once.
 */
describe('chaos: worker killed between its transition script and the next step', () => {
  const workers: ChildProcess[] = [];
  const config = testConfig({ AGENTQ_LOCK_DURATION_MS: '2000', AGENTQ_STALLED_INTERVAL_MS: '1000' });
  const client = new AgentClient({ config });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await client.close();
  });

  it('the handed-out job is re-delivered after the lock lapses; the run completes with each step committed once', async () => {
    const env = workerEnv(config, { AGENTQ_LOCK_DURATION_MS: '2000', AGENTQ_STALLED_INTERVAL_MS: '1000' });
    const doomed = await spawnWorker('test/chaos/kill-at-node-worker.ts', { ...env, KILL_AT_SUPERSTEP: '3' });
    workers.push(doomed);
    const exited = new Promise<void>((resolve) => doomed.once('exit', () => resolve()));
    const run = await client.enqueue({ graph: 'chain', input: { steps: 6 } });
    await exited;
    const killedAt = Date.now();
    // The dead worker held step 3's job, handed to it by step 2's script: committed up to step 2.
    expect((await client.get(run.id))?.stepCount).toBe(3);
    const queue = `${stepQueuePrefix(config.queuePrefix, shardOf(run.id, config.shards), config.shards)}:${STEP_QUEUE}`;
    const held = `${run.id}.s3.t0`;
    expect(await client.store.redis.lrange(`${queue}:active`, 0, -1)).toContain(held);
    const events = await client.store.redis.xrange(`${queue}:events`, '-', '+');
    expect(
      events.some(([, fields]) => fields.includes('active') && fields.includes(held) && fields.includes('eager')),
    ).toBe(true);

    workers.push(await spawnWorker('test/chaos/kill-at-node-worker.ts', { ...env, KILL_AT_SUPERSTEP: '-1' }));
    const done = await client.wait(run.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    const recoveredMs = Date.now() - killedAt;
    const audit = await auditRun(client, run.id, { supersteps: 6 });
    expect(audit.problems).toEqual([]);
    expect(audit.committedTwice).toEqual([]);
    // Step 3 started once on the dead worker (its step-start came with the job) and once on the new one.
    expect(audit.starts.get(stepKey(3))?.length).toBe(2);
    // Lock 2 s + stall check 1 s, with room for a loaded machine.
    expect(recoveredMs).toBeLessThan(20_000);
  }, 60_000);
});
