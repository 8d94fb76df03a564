import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { shardOf, stepQueuePrefix } from '../../shared/contracts/shards.js';
import { auditRun } from '../helpers/run-audit.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';

const QUESTIONS = 6;
const SETTINGS = {
  AGENTQ_LOCK_DURATION_MS: '2000',
  AGENTQ_TAKE_LOCK_MS: '2000',
  AGENTQ_STALLED_INTERVAL_MS: '1000',
  AGENTQ_LIVENESS_TTL_MS: '2000',
  AGENTQ_RECONCILE_INTERVAL_MS: '1000',
  AGENTQ_RECONCILE_AFTER_MS: '3000',
};

/**
 * A batch's next question is handed on by the worker whose run freed its slot (the finish hook's RELEASE
 * claims it; the worker creates its run with the start job taken into its own slot). The worker dies on
 * that way — after the claim, before the run exists; or after its start job was taken, before it ran —
 * and a worker that starts afterwards must finish the batch: every question answered by one completed
 * run, no step committed twice, nothing left claimed or locked.
 */
describe('chaos: a worker killed between freeing a batch slot and starting the next question', () => {
  const config = testConfig(SETTINGS);
  const client = new AgentClient({ config });
  const workers: ChildProcess[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await client.close();
  });

  it.each([
    ['claimed', 'the reconciler repairs the claimed item without a run'],
    ['taken', "the stalled-job check hands the dead worker's start job on"],
  ])(
    'killed at %s: %s',
    async (killAt) => {
      const env = workerEnv(config, { ...SETTINGS, AGENTQ_WORKER_CONCURRENCY: '2' });
      const doomed = await spawnWorker('test/chaos/batch-handoff-kill-worker.ts', { ...env, KILL_AT: killAt });
      workers.push(doomed);
      const exited = new Promise<void>((resolve) => doomed.once('exit', () => resolve()));
      const questions = Array.from({ length: QUESTIONS }, (_, index) => ({ question: `question ${index}` }));
      const { batch } = await client.batches.submit(
        { collection: 'docs', questions, options: { concurrency: 2, graph: 'echo-rag' } },
        { tenant: 'acme' },
      );
      await exited;
      // The first question's run ended; the next one is claimed (in flight) but not answered.
      const inflight = await client.store.redis.smembers(client.store.keys.batch(batch.id).inflight);
      expect(inflight.length).toBeGreaterThan(0);
      const second = `${batch.id}.i1`;
      expect(inflight).toContain(second);
      const run = await client.get(second);
      if (killAt === 'claimed') expect(run).toBeNull();
      else {
        // Created, its start job active and locked by the dead worker, taken into its slot ('eager').
        expect(run?.status).toBe('queued');
        const queue = `${stepQueuePrefix(config.queuePrefix, shardOf(second, config.shards), config.shards)}:${STEP_QUEUE}`;
        expect(await client.store.redis.lrange(`${queue}:active`, 0, -1)).toContain(`${second}.s0.t0`);
        const events = await client.store.redis.xrange(`${queue}:events`, '-', '+');
        const activations = events.filter(
          ([, fields]) => fields.includes('active') && fields.includes(`${second}.s0.t0`),
        );
        expect(activations.map(([, fields]) => fields.includes('eager'))).toEqual([true]);
      }

      workers.push(await spawnWorker('test/chaos/batch-handoff-kill-worker.ts', { ...env, KILL_AT: '' }));
      // Every question answered by one completed run, nothing left in flight.
      await eventually(async () => (await client.batches.get(batch.id))?.status === 'completed', 60_000);
      expect((await client.batches.get(batch.id))?.progress).toMatchObject({ completed: QUESTIONS, running: 0 });
      const results = (await client.batches.results(batch.id))!;
      expect(results.map((result) => [result.answer, result.status])).toEqual(
        questions.map((question) => [`echo: ${question.question}`, 'completed']),
      );
      for (let index = 0; index < QUESTIONS; index += 1) {
        const audit = await auditRun(client, `${batch.id}.i${index}`, { supersteps: 1 });
        expect(audit.problems).toEqual([]);
        expect(audit.committedTwice).toEqual([]);
      }
      await killHard(workers.pop()!);
    },
    90_000,
  );
});
