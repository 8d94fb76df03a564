/**
 * The plain BullMQ job chain in the peers bench: one job per step, each adding the next (no state, no
 * run store), the last reporting the run finished. Lock and stall settings are agentq's defaults (3 s
 * lock, 1 s stall check), so a killed job comes back as soon as agentq's would; a job killed after its
 * model answer arrived but before it completed is run again, answer and all.
 */
import { Queue, Worker } from 'bullmq';
import type { StepTiming } from '../../lib/step-timings.js';
import { stepBody } from '../peer-step-body.js';
import { STEPS, type StepKind } from '../peer-steps.js';
import { reportFinished, servePeer } from './serve-peer.js';

interface Link {
  runId: string;
  index: number;
  kind: StepKind;
}

const connection = { url: process.env.REDIS_URL!, maxRetriesPerRequest: null };
const prefix = process.env.BENCH_CHAIN_PREFIX!;
const timings = new Map<string, StepTiming[]>();
const body = stepBody(timings);
const waiting = new Map<string, () => void>();
const queue = new Queue<Link>('bench-peer-chain', { connection, prefix });
const options = (link: Link) => ({
  jobId: `${link.runId}.${link.index}`,
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 1000 },
});
const worker = new Worker<Link>(
  'bench-peer-chain',
  async (job) => {
    const { runId, index, kind } = job.data;
    await body(runId, index, kind);
    if (index + 1 < STEPS) {
      const next = { runId, index: index + 1, kind };
      await queue.add('link', next, options(next));
      return;
    }
    reportFinished(runId);
    waiting.get(runId)?.();
    waiting.delete(runId);
  },
  { connection, prefix, concurrency: 100, lockDuration: 3000, stalledInterval: 1000, maxStalledCount: 5 },
);
await worker.waitUntilReady();

const start = async (runId: string, kind: StepKind) => {
  const first = { runId, index: 0, kind };
  await queue.add('link', first, options(first));
};

servePeer(
  {
    runOne: (runId, kind) =>
      new Promise<void>((resolve, reject) => {
        waiting.set(runId, resolve);
        start(runId, kind).catch(reject);
      }),
    submit: start,
    close: async () => {
      await worker.close();
      await queue.close();
    },
  },
  timings,
);
