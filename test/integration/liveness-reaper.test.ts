import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { Keys } from '../../shared/store/keys.js';
import { ownWorker, startLiveness, type LivenessOptions } from '../../worker/runtime/liveness-thread.js';
import { testConfig } from '../helpers/test-env.js';

/**
 * A worker process's job locks are long (a blocked event loop must not lose them), so its
 * death is found by its liveness key lapsing: another process's liveness thread releases the locks its
 * tokens hold, and BullMQ's stalled-job check hands the jobs on. Real redis-server, real BullMQ workers.
 */
describe('liveness threads release a dead process’s job locks', () => {
  const config = testConfig();
  const keys = new Keys(config.keyPrefix, config.shards);
  const redis = new Redis(config.redisUrl!);
  const connection = { url: config.redisUrl!, maxRetriesPerRequest: null };
  const queueName = 'reaper-test';
  const queueKey = `${config.queuePrefix}:${queueName}`;
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    redis.disconnect();
  });

  /** A liveness thread beating every 200 ms (TTL 600 ms) on these queues. */
  const liveness = (options: Partial<LivenessOptions> = {}) => {
    const started = startLiveness({
      redis: config,
      alivePrefixes: [keys.alivePrefix(0)],
      intervalMs: 200,
      ttlMs: 600,
      lockMs: 30_000,
      registryKey: keys.livenessRegistry(),
      reapQueues: [queueKey],
      // The first test's workers' locks are renewed by BullMQ, not held through the thread.
      heldQueues: [],
      ...options,
    });
    closers.push(() => started.close());
    return started;
  };

  /** A worker of `processId` that takes jobs and never finishes them (a process about to be killed). */
  const stuckWorker = (processId: string, taken: string[], concurrency: number) => {
    const worker = ownWorker(
      new Worker(
        queueName,
        async (job) => {
          taken.push(job.id!);
          await new Promise(() => undefined);
        },
        {
          connection,
          prefix: config.queuePrefix,
          autorun: false,
          lockDuration: 30_000,
          stalledInterval: 300,
          concurrency,
        },
      ),
      processId,
    );
    void worker.run();
    return worker;
  };

  it('releases only the dead process’s locks; its jobs run again on a live worker within seconds', async () => {
    const queue = new Queue(queueName, { connection, prefix: config.queuePrefix });
    closers.push(() => queue.close());
    // The doomed process: its liveness thread and a worker whose tokens name it, holding 3 jobs.
    const doomed = liveness();
    await doomed.ready;
    const doomedTaken: string[] = [];
    // Three slots: its three jobs fill it, so it takes nothing else.
    const doomedWorker = stuckWorker(doomed.processId, doomedTaken, 3);
    await queue.addBulk([1, 2, 3].map((n) => ({ name: 'job', data: { n }, opts: { jobId: `dead-${n}` } })));
    await until(() => doomedTaken.length === 3, 5000, 'the doomed worker to take its 3 jobs');
    // A live process that holds one job of its own meanwhile, and watches its peers.
    const reaped: [string, number][] = [];
    const survivor = liveness({ onReaped: (processId, released) => reaped.push([processId, released]) });
    await survivor.ready;
    const survivorTaken: string[] = [];
    const survivorWorker = stuckWorker(survivor.processId, survivorTaken, 5);
    closers.push(() => survivorWorker.close(true));
    await queue.add('job', { n: 4 }, { jobId: 'live-4' });
    await until(() => survivorTaken.includes('live-4'), 5000, 'the survivor to take its job');
    const lockOf = (jobId: string) => redis.get(`${queueKey}:${jobId}:lock`);
    expect(await lockOf('dead-1')).toMatch(new RegExp(`^${escape(doomed.processId)}/`));

    // "kill -9": the doomed process stops beating and its worker stops renewing; its locks stay.
    await doomedWorker.close(true);
    // close() deletes the liveness key and leaves the registry, as a clean shutdown does; a kill does
    // neither: put the process back in the registry with no key, which is what a kill leaves.
    await doomed.close();
    await redis.sadd(keys.livenessRegistry(), doomed.processId);
    expect(await lockOf('dead-1')).not.toBeNull();

    // Its locks had 30 s to run: released within 5 s, by the survivor's thread, is the reaper's doing. The
    // report comes after the releases of every queue and the registry's update: waited for too, or a busy
    // machine finds the locks gone before the thread's message has arrived.
    await until(
      async () =>
        (await lockOf('dead-1')) === null &&
        (await lockOf('dead-2')) === null &&
        (await lockOf('dead-3')) === null &&
        reaped.length > 0,
      5000,
      'the dead process’s locks to be released and the release reported',
    );
    expect(reaped).toEqual([[doomed.processId, 3]]);
    // The survivor's lock is untouched, and its process is still registered.
    expect(await lockOf('live-4')).toMatch(new RegExp(`^${escape(survivor.processId)}/`));
    expect(await redis.sismember(keys.livenessRegistry(), survivor.processId)).toBe(1);
    expect(await redis.sismember(keys.livenessRegistry(), doomed.processId)).toBe(0);
    // BullMQ's stalled-job check hands the three on: the survivor's worker takes them.
    await until(
      () => ['dead-1', 'dead-2', 'dead-3'].every((id) => survivorTaken.includes(id)),
      10_000,
      'the dead process’s jobs to run again',
    );
  }, 30_000);

  it('after a reconnection, releases the step locks of its own process that nobody holds (a take whose reply was lost)', async () => {
    const queue = new Queue(`${queueName}-lost`, { connection, prefix: config.queuePrefix });
    closers.push(() => queue.close());
    const lostQueueKey = `${config.queuePrefix}:${queueName}-lost`;
    const released: number[] = [];
    const live = liveness({
      reapQueues: [lostQueueKey],
      heldQueues: [lostQueueKey],
      onLost: (count) => released.push(count),
    });
    await live.ready;
    // Two jobs taken under this process's tokens with a 30 s lock (BullMQ's manual fetch): one the
    // thread holds, as a step being run; the other one nobody here knows of, as a take whose reply was lost.
    const taker = ownWorker(
      new Worker(`${queueName}-lost`, null, {
        connection,
        prefix: config.queuePrefix,
        lockDuration: 30_000,
        autorun: false,
      }),
      live.processId,
    );
    closers.push(() => taker.close(true));
    await queue.add('job', {}, { jobId: 'held' });
    await queue.add('job', {}, { jobId: 'lost' });
    const held = await taker.getNextJob(`${taker.id}:1`);
    const lost = await taker.getNextJob(`${taker.id}:2`);
    expect([held?.id, lost?.id]).toEqual(['held', 'lost']);
    live.holdLock(`${lostQueueKey}:held:lock`, `${taker.id}:1`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // No reconnection yet: nothing is swept.
    expect(await redis.get(`${lostQueueKey}:lost:lock`)).toBe(`${taker.id}:2`);

    // The thread's connection dropped, as when Redis restarts: it reconnects. (Only its own: the
    // redis-server is shared with the other test files.)
    const lines = String(await redis.client('LIST'))
      .trim()
      .split('\n')
      .filter((line) => line.includes(` name=agentq-liveness-${live.processId} `));
    expect(lines).toHaveLength(1);
    await redis.client('KILL', 'ID', /\bid=(\d+)/.exec(lines[0]!)![1]!);
    await until(
      async () => (await redis.get(`${lostQueueKey}:lost:lock`)) === null,
      5000,
      'the unheld lock to be released',
    );
    expect(await redis.get(`${lostQueueKey}:held:lock`)).toBe(`${taker.id}:1`);
    expect(released).toEqual([1]);
  }, 30_000);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
