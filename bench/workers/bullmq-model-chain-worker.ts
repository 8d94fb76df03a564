/**
 * The model-step baseline: a plain BullMQ job chain whose every job makes the model call agentq's
 * `bench-model` nodes make (bench/lib/model-graph.ts: the same request through agentq's OpenAI adapter,
 * at OPENAI_BASE_URL), then adds the next job; no state, no claim, no memo. The last job of a chain reports
 * to the parent over IPC. On request it answers how long each job's body took (model call and the next
 * job's add), the counterpart of agentq's node start-to-end time.
 */
import { Queue, Worker } from 'bullmq';
import { OpenAILanguageModel } from '../../shared/adapters/openai/openai-language-model.js';
import { MODEL_GRAPH_MODEL, nodeRequest } from '../lib/model-graph.js';
import { addNextLink, type ChainLink } from '../lib/bullmq-chain.js';
import { answerMeterRequests } from '../lib/process-meter.js';

answerMeterRequests();

const url = process.env.REDIS_URL!;
const prefix = process.env.AGENTQ_QUEUE_PREFIX ?? 'bull';
const concurrency = Number(process.env.AGENTQ_WORKER_CONCURRENCY ?? 100);
const model = new OpenAILanguageModel({
  model: MODEL_GRAPH_MODEL,
  baseURL: process.env.OPENAI_BASE_URL!,
  apiKey: 'bench',
});
const connection = { url, maxRetriesPerRequest: null };
const queue = new Queue('bench-model-chain', { connection, prefix });
let bodies: number[] = [];
const worker = new Worker<ChainLink>(
  'bench-model-chain',
  async (job) => {
    const started = performance.now();
    const { chain, index } = job.data;
    const response = await model.generate(nodeRequest(index));
    if (response.message.content !== 'ok') throw new Error(`BENCH_MODEL_ANSWER: ${response.message.content}`);
    if (!(await addNextLink(queue, job.data))) process.send?.({ type: 'finished', runId: chain });
    bodies.push(performance.now() - started);
  },
  { connection, prefix, concurrency },
);
await worker.waitUntilReady();
process.on('message', (message: { type: string }) => {
  if (message.type === 'bodies') {
    process.send?.({ type: 'bodies', bodies });
    bodies = [];
  }
  if (message.type === 'stop') void Promise.all([worker.close(), queue.close()]).then(() => process.exit(0));
});
process.send?.({ type: 'ready' });
