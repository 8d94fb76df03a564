/**
 * The baseline: a plain BullMQ job chain. Each job adds the next (no state, no run store) until the
 * chain has `length` jobs; the last one reports to the parent over IPC.
 */
import { Queue, Worker } from 'bullmq';
import { startTelemetry } from '../../shared/telemetry/telemetry.js';
import { addNextLink, type ChainLink } from '../lib/bullmq-chain.js';
import { answerMeterRequests } from '../lib/process-meter.js';

answerMeterRequests();

const url = process.env.REDIS_URL!;
const prefix = process.env.AGENTQ_QUEUE_PREFIX ?? 'bull';
const concurrency = Number(process.env.AGENTQ_WORKER_CONCURRENCY ?? 100);
const telemetry = await startTelemetry({ serviceName: 'bullmq-chain' });
const otel = telemetry.bullmq ? { telemetry: telemetry.bullmq } : {};
const connection = { url, maxRetriesPerRequest: null };
const queue = new Queue('bench-chain', { connection, prefix, ...otel });
const worker = new Worker<ChainLink>(
  'bench-chain',
  async (job) => {
    if (!(await addNextLink(queue, job.data))) process.send?.({ type: 'finished', runId: job.data.chain });
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
