import type { ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { INTAKE_QUEUE } from '../../shared/contracts/queues.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { atScale } from '../helpers/suite-scale.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';

const GOOD_RUNS = 30;
const POISON_JOBS = atScale(2, 3);
const POISON_BYTES = 20 * 1024 * 1024;

/**
 * Poison jobs. Raw intake jobs of 20 MB were each re-processed 5-13 times (parsing
 * them blocked the loop past the lock), 30 good runs beside them took 47× longer, and the rejected runs
 * kept their 20 MB input for 7 days. Now data over AGENTQ_MAX_JOB_BYTES is never parsed: the run fails
 * once, under the id its producer gave, with a message naming the limit, and without its input.
 */
describe('chaos: oversized raw jobs on the intake queue', () => {
  const config = testConfig();
  const client = new AgentClient({ config });
  const intake = new Queue(INTAKE_QUEUE, {
    connection: { url: config.redisUrl!, maxRetriesPerRequest: null },
    prefix: config.queuePrefix,
  });
  const redis = new Redis(config.redisUrl!);
  const workers: ChildProcess[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await intake.obliterate({ force: true }).catch(() => undefined);
    await intake.close();
    await client.close();
    redis.disconnect();
  });

  async function goodRuns(tag: string): Promise<number> {
    const started = Date.now();
    const ids = Array.from({ length: GOOD_RUNS }, (_, index) => `good-${tag}-${index}`);
    await intake.addBulk(
      ids.map((runId) => ({ name: 'raw', data: { v: 1, graph: 'chain', input: { steps: 3 }, runId } })),
    );
    await eventually(
      async () => {
        const records = await Promise.all(ids.map((id) => client.get(id)));
        return records.every((record) => record?.status === 'completed');
      },
      180_000,
      `the ${GOOD_RUNS} good runs (${tag}) to complete`,
    );
    return Date.now() - started;
  }

  it(`${POISON_JOBS} raw jobs of 20 MB fail once each, unread and unstored, and ${GOOD_RUNS} good runs beside them are not held up`, async () => {
    workers.push(
      await spawnWorker('test/chaos/chain-worker.ts', workerEnv(config, { AGENTQ_INGEST_CONCURRENCY: '0' })),
    );
    const baselineMs = await goodRuns('alone');

    const pad = 'x'.repeat(POISON_BYTES);
    const poisonIds = Array.from({ length: POISON_JOBS }, (_, index) => `poison-${index}`);
    const poisonJobs = await Promise.all(
      poisonIds.map((runId) =>
        intake.add('raw', { v: 1, graph: 'chain', input: { steps: 1, pad }, runId, tenant: 'acme' }),
      ),
    );
    const besideMs = await goodRuns('beside');

    const poisoned = await Promise.all(
      poisonIds.map((id) => eventually(async () => (await client.get(id)) ?? undefined, 30_000, `run ${id}`)),
    );
    for (const record of poisoned) {
      expect(record.status).toBe('failed');
      expect(record.error).toMatchObject({ code: 'INVALID_INPUT', details: { limitBytes: 1024 * 1024 } });
      expect(record.error?.message).toMatch(/is \d+ bytes, over the limit of 1048576 bytes \(AGENTQ_MAX_JOB_BYTES\)/);
      expect((await client.store.reads.get(record.id))?.input ?? null).toBeNull();
    }
    // Each poison job was taken once (no stall brought it back) and keeps a stand-in, not its 20 MB.
    const jobs = await Promise.all(poisonJobs.map((job) => intake.getJob(job.id!)));
    for (const job of jobs) {
      expect(job?.attemptsStarted).toBe(1);
      expect(job?.stalledCounter).toBe(0);
      expect(await redis.hstrlen(`${config.queuePrefix}:${INTAKE_QUEUE}:${job!.id}`, 'data')).toBeLessThan(1024);
    }
    const ratio = Math.round((besideMs / baselineMs) * 100) / 100;
    console.log(
      `poison intake: ${GOOD_RUNS} good runs took ${baselineMs} ms alone, ${besideMs} ms beside ${POISON_JOBS} × 20 MB jobs (${ratio}×)`,
    );
    recordFigure({ scenario: 'poison intake', name: 'good_runs_alone_ms', value: baselineMs });
    recordFigure({ scenario: 'poison intake', name: 'good_runs_beside_poison_ms', value: besideMs });
    recordFigure({ scenario: 'poison intake', name: 'good_runs_slowdown', value: ratio, goal: '≤ 1.5' });
  }, 300_000);
});
