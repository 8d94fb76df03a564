/**
 * The baseline: a plain BullMQ job chain. Each job adds the next (no state, no run store) until the
 * chain has `length` jobs; the last one reports to the parent over IPC.
 */
import { Queue, Worker } from 'bullmq';
import { startTelemetry } from '../../shared/telemetry/telemetry.js';
import { answerMeterRequests } from '../lib/process-meter.js';

answerMeterRequests();

const url = process.env.REDIS_URL!;
const prefix = process.env.AGENTQ_QUEUE_PREFIX ?? 'bull';
const concurrency = Number(process.env.AGENTQ_WORKER_CONCURRENCY ?? 100);
const telemetry = await startTelemetry({ serviceName: 'bullmq-chain' });
const otel = telemetry.bullmq ? { telemetry: telemetry.bullmq } : {};
const connection = { url, maxRetriesPerRequest: null };
const queue = new Queue('bench-chain', { connection, prefix, ...otel });
const worker = new Worker<{ chain: string; index: number; length: number }>(
  'bench-chain',
  async (job) => {
    const { chain, index, length } = job.data;
    if (index + 1 < length) {
      await queue.add(
        'link',
        { chain, index: index + 1, length },
        { jobId: `${chain}.${index + 1}`, removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } },
      );
    } else {
      process.send?.({ type: 'finished', runId: chain });
    }
  },
  { connection, prefix, concurrency, ...otel },
);
await worker.waitUntilReady();
process.on('message', (message: { type: string }) => {
  if (message.type === 'stop')
    void Promise.all([worker.close(), queue.close()]).then(async () => {
      await telemetry.shutdown();
      process.exit(0);
    });
});
process.send?.({ type: 'ready' });
