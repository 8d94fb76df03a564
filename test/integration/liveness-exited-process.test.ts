import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { JOB_LOCK_SUFFIX, queueLockScope } from '../../shared/bullmq/bullmq-jobs.js';
import { Keys } from '../../shared/store/keys.js';
import {
  machineIdentity,
  ownWorker,
  startLiveness,
  type LivenessOptions,
} from '../../worker/runtime/liveness-thread.js';
import { testConfig } from '../helpers/test-env.js';

/** A pid that ran and exited: a child that ends at once. */
async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

/**
 * A worker killed with `kill -9` leaves its liveness key for up to AGENTQ_LIVENESS_TTL_MS, and its jobs
 * and claims on paid work wait for it to lapse. A process of the same machine (a worker restarted in its
 * place) sees that the pid has exited and takes its locks and claims over at its first beat. One whose
 * pid still runs, or whose key says another machine or pid namespace, keeps them.
 */
describe('a liveness thread takes over at once from a process that exited on its machine', () => {
  const config = testConfig();
  const keys = new Keys(config.keyPrefix, config.shards);
  const redis = new Redis(config.redisUrl!);
  const queueKey = `${config.queuePrefix}:exited-test`;
  const scope = queueLockScope(queueKey);
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => undefined);
    redis.disconnect();
  });
  const identity = machineIdentity();

  /** A liveness thread (a beat a second, TTL 3 s) reaping on `queue`. */
  function livenessOn(queue: string, options: Partial<LivenessOptions>) {
    const liveness = startLiveness({
      redis: config,
      alivePrefixes: [keys.alivePrefix(0)],
      intervalMs: 1000,
      ttlMs: 3000,
      lockMs: 30_000,
      registryKey: keys.livenessRegistry(),
      reapQueues: [queue],
      heldQueues: [],
      ...options,
    });
    closers.push(() => liveness.close());
    return liveness;
  }

  /** Registers `member` as a live process (its key for 60 s, holding `value`) holding job `jobId`'s lock. */
  async function registered(member: string, value: string, jobId: string): Promise<void> {
    await redis.set(keys.alivePrefix(0) + member, value, 'PX', 60_000);
    await redis.sadd(keys.livenessRegistry(), member);
    await redis.lpush(scope.activeKey, jobId);
    await redis.set(scope.jobKeyPrefix + jobId + JOB_LOCK_SUFFIX, `${member}/token`, 'PX', 60_000);
  }

  // Skipped (the runner reports it) where the process identity cannot be read: it needs Linux's /proc (boot
  // id, pid namespace) to tell an exited process on this machine from a live one.
  it.skipIf(identity === '')(
    'releases an exited process’s locks and liveness key at the first beat, not after its TTL (Linux: reads /proc)',
    async () => {
      const exited = `${hostname()}:${await exitedPid()}:aaaaaa`;
      const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
      closers.push(async () => sleeper.kill('SIGKILL'));
      const running = `${hostname()}:${sleeper.pid}:bbbbbb`;
      const elsewhere = `${hostname()}:${await exitedPid()}:cccccc`;
      await registered(exited, identity, 'exited-job');
      await registered(running, identity, 'running-job');
      // The same host name and an exited pid, but another boot or pid namespace: nothing to ask the kernel.
      await registered(elsewhere, 'another-boot/pid:[1]', 'elsewhere-job');

      const reaped: string[] = [];
      const liveness = livenessOn(queueKey, { onReaped: (processId) => reaped.push(processId) });
      // The first beat reaps before it says it is ready.
      await liveness.ready;

      const lock = (jobId: string) => redis.get(scope.jobKeyPrefix + jobId + JOB_LOCK_SUFFIX);
      expect(await lock('exited-job')).toBeNull();
      expect(await redis.exists(keys.alivePrefix(0) + exited)).toBe(0);
      expect(await redis.sismember(keys.livenessRegistry(), exited)).toBe(0);
      expect(await lock('running-job')).toBe(`${running}/token`);
      expect(await lock('elsewhere-job')).toBe(`${elsewhere}/token`);
      expect(await redis.exists(keys.alivePrefix(0) + running, keys.alivePrefix(0) + elsewhere)).toBe(2);
      // Its own key holds the identity, for the next process of this machine to compare.
      expect(await redis.get(keys.alivePrefix(0) + liveness.processId)).toBe(identity);
      await expect.poll(() => reaped).toEqual([exited]);
    },
  );

  // Skipped (the runner reports it) where the process identity cannot be read, as above.
  it.skipIf(identity === '')(
    'puts an exited process’s active jobs back in wait at its first beat, without a worker’s stalled check (Linux: reads /proc)',
    async () => {
      const connection = { url: config.redisUrl!, maxRetriesPerRequest: null };
      const name = 'exited-moved';
      const queue = new Queue(name, { connection, prefix: config.queuePrefix });
      closers.push(() => queue.close());
      const taken: string[] = [];
      // Workers of two processes that hold their jobs: checks only an hour apart, so none moves a job here.
      const holding = (processId: string, concurrency: number) => {
        const worker = ownWorker(
          new Worker(
            name,
            async (job) => {
              taken.push(job.id!);
              await new Promise(() => undefined);
            },
            { connection, prefix: config.queuePrefix, autorun: false, concurrency, stalledInterval: 3_600_000 },
          ),
          processId,
        );
        void worker.run();
        return worker;
      };
      const exited = `${hostname()}:${await exitedPid()}:dddddd`;
      const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
      closers.push(async () => sleeper.kill('SIGKILL'));
      const running = `${hostname()}:${sleeper.pid}:eeeeee`;
      const doomed = holding(exited, 3);
      await queue.addBulk([1, 2, 3].map((n) => ({ name: 'job', data: { n }, opts: { jobId: `exited-${n}` } })));
      await expect.poll(() => taken.length, { timeout: 10_000 }).toBe(3);
      // kill -9: its worker stops, its locks and active jobs stay.
      await doomed.close(true);
      const live = holding(running, 1);
      closers.push(() => live.close(true));
      await queue.add('job', { n: 4 }, { jobId: 'running-4' });
      await expect.poll(() => taken.includes('running-4'), { timeout: 10_000 }).toBe(true);
      for (const member of [exited, running]) {
        await redis.set(keys.alivePrefix(0) + member, identity, 'PX', 60_000);
        await redis.sadd(keys.livenessRegistry(), member);
      }
      expect(await queue.getJobState('exited-1')).toBe('active');

      const queueOf = `${config.queuePrefix}:${name}`;
      const liveness = livenessOn(queueOf, {
        stalledCheck: { queues: [queueOf], maxStalledCount: 10, intervalMs: 1000 },
      });
      await liveness.ready;

      // Back in wait by the first beat's reap (BullMQ's state), each with its stall counted as BullMQ's check counts it.
      for (const id of ['exited-1', 'exited-2', 'exited-3']) {
        expect(await queue.getJobState(id)).toBe('waiting');
        expect((await queue.getJob(id))?.stalledCounter).toBe(1);
      }
      // The running process's job, locked, stays where it is.
      expect(await queue.getJobState('running-4')).toBe('active');
      expect((await queue.getJob('running-4'))?.stalledCounter).toBe(0);
    },
  );
});
