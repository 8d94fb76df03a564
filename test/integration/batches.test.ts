import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatBatchResultsCsv } from '../../producer/cli/format-batch-results.js';
import { START_NODE } from '../../shared/contracts/job-schema.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { allShards, shardOf, stepQueuePrefix } from '../../shared/contracts/shards.js';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const running = new Set<string>();
let maxRunning = 0;
const answered: string[] = [];

const echo = echoRagGraph({
  onStart(runId) {
    running.add(runId);
    maxRunning = Math.max(maxRunning, running.size);
  },
  onEnd(runId) {
    running.delete(runId);
    answered.push(runId);
  },
});

describe('batches through the queue', () => {
  let env: TestEnv;
  let batches: TestEnv['client']['batches'];
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [echo] });
    batches = env.client.batches;
  });
  afterAll(async () => env.close());

  it('answers every question once, never more than the concurrency cap at a time, results in order', async () => {
    maxRunning = 0;
    const questions = Array.from({ length: 12 }, (_, index) => ({ question: `question ${index}` }));
    const { batch } = await batches.submit(
      { collection: 'docs', questions, options: { concurrency: 3, graph: 'echo-rag' } },
      { tenant: 'acme', idempotencyKey: 'nightly-1' },
    );
    expect(batch.progress.total).toBe(12);
    const done = await eventually(async () => {
      const record = await batches.get(batch.id);
      return record?.status === 'completed' && record;
    }, 30_000);
    expect(done.progress).toEqual({ total: 12, queued: 0, running: 0, completed: 12, failed: 0, cancelled: 0 });
    expect(maxRunning).toBeLessThanOrEqual(3);
    expect(maxRunning).toBeGreaterThan(1);
    // Every question's run starts with its start job (docs/concepts/step-engine.md), the first 3 (the producer's) as
    // the 9 the workers dispatched: one script creates the run and its job, and the worker that takes the job
    // takes the run in. (Read the step queue's event stream.)
    const events = await env.client.store.redis.xrange(
      `${stepQueuePrefix(env.config.queuePrefix, 0, env.config.shards)}:${STEP_QUEUE}:events`,
      '-',
      '+',
    );
    const added = events
      .map(([, fields]) => fields)
      .filter((fields) => fields[1] === 'added' && fields[fields.indexOf('name') + 1] === START_NODE);
    const startJobs = added
      .map((fields) => fields[fields.indexOf('jobId') + 1])
      .filter((jobId) => jobId?.startsWith(batch.id));
    expect(startJobs.sort()).toEqual(questions.map((_question, index) => `${batch.id}.i${index}.s0.t0`).sort());
    const results = (await batches.results(batch.id))!;
    expect(results.map((result) => [result.id, result.answer, result.status])).toEqual(
      questions.map((question, index) => [String(index + 1), `echo: ${question.question}`, 'completed']),
    );
    const csv = formatBatchResultsCsv(results);
    expect(csv.split('\r\n')[0]).toBe('id,question,status,answer,sources,error_code,error_message,run_id');
    expect(csv).toContain('1,question 0,completed,echo: question 0,');

    // The same batch again (same idempotency key) answers nothing twice.
    const before = answered.length;
    const again = await batches.submit(
      { collection: 'docs', questions, options: { concurrency: 3, graph: 'echo-rag' } },
      { tenant: 'acme', idempotencyKey: 'nightly-1' },
    );
    expect(again.created).toBe(false);
    expect(again.batch.id).toBe(batch.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered.length).toBe(before);
  });

  // A batch's next question is started by the worker whose run freed its slot: the run's start job is
  // created active, locked by that worker (its step queue's event stream says `eager`), and run in the
  // same slot, never waiting in the queue for a worker to take it.
  it("each question after the first wave starts in the finishing worker's slot, through no wait list", async () => {
    maxRunning = 0;
    const questions = Array.from({ length: 10 }, (_, index) => ({ question: `question ${index}` }));
    const { batch } = await batches.submit(
      { collection: 'docs', questions, options: { concurrency: 2, graph: 'echo-rag' } },
      { tenant: 'acme' },
    );
    const done = await eventually(async () => {
      const record = await batches.get(batch.id);
      return record?.status === 'completed' && record;
    }, 30_000);
    expect(done.progress).toEqual({ total: 10, queued: 0, running: 0, completed: 10, failed: 0, cancelled: 0 });
    expect(maxRunning).toBeLessThanOrEqual(2);
    expect(answered.filter((runId) => runId.startsWith(batch.id)).sort()).toEqual(
      questions.map((_question, index) => `${batch.id}.i${index}`).sort(),
    );
    const events = await env.client.store.redis.xrange(
      `${stepQueuePrefix(env.config.queuePrefix, 0, env.config.shards)}:${STEP_QUEUE}:events`,
      '-',
      '+',
    );
    /** How each start job of the batch became active: 'eager' (handed over by a script) or 'taken' (from the queue). */
    const activations = new Map<string, string[]>();
    for (const [, fields] of events) {
      const jobId = fields[fields.indexOf('jobId') + 1] ?? '';
      if (fields[1] !== 'active' || !jobId.startsWith(batch.id) || !jobId.endsWith('.s0.t0')) continue;
      const index = jobId.slice(batch.id.length + 2, -'.s0.t0'.length);
      activations.set(index, [...(activations.get(index) ?? []), fields.includes('eager') ? 'eager' : 'taken']);
    }
    // The first question went in with the submission (the producer's: a live batch warms the provider's
    // prompt cache with one question first). Its end claimed two (the warm-up over): one started in the slot
    // it freed, the other through the queue. From then on each question starts in the slot its predecessor freed.
    expect(activations.get('0')).toEqual(['taken']);
    const ways = [...activations.values()];
    expect(ways.every((way) => way.length === 1)).toBe(true);
    expect(ways.flat().filter((way) => way === 'taken')).toHaveLength(2);
    expect(ways.flat().filter((way) => way === 'eager')).toHaveLength(8);
    // No start job of the batch is left behind in the queue.
    const queue = env.queue(STEP_QUEUE);
    const waiting = await queue.getJobs(['wait', 'prioritized', 'active', 'delayed']);
    expect(waiting.filter((job) => job.id?.startsWith(batch.id))).toEqual([]);
  }, 40_000);

  it('cancelling a batch cancels its runs in flight and dispatches no more', async () => {
    const questions = Array.from({ length: 10 }, (_, index) => ({ question: `slow question ${index}` }));
    const { batch } = await batches.submit(
      { collection: 'docs', questions, options: { concurrency: 2, graph: 'echo-rag' } },
      { tenant: 'acme' },
    );
    await eventually(async () => ((await batches.get(batch.id))?.progress.running ?? 0) > 0);
    const cancelled = await batches.cancel(batch.id);
    expect(cancelled?.status).toBe('cancelled');
    const settled = await eventually(async () => {
      const record = await batches.get(batch.id);
      return record?.progress.running === 0 ? record : undefined;
    });
    expect(settled.progress.completed + settled.progress.cancelled).toBe(10);
    expect(settled.progress.cancelled).toBeGreaterThanOrEqual(8);
  });

  it('rejects an invalid batch with the field named', async () => {
    await expect(batches.submit({ questions: [] } as never, { tenant: 'acme' })).rejects.toThrow(
      /questions: a batch needs at least one question/,
    );
    await expect(
      batches.submit(
        {
          questions: [
            { id: 'a', question: 'x' },
            { id: 'a', question: 'y' },
          ],
          options: { graph: 'echo-rag' },
        },
        { tenant: 'acme' },
      ),
    ).rejects.toThrow(/questions.1.id 'a' is used twice/);
  });
});

// Over several step-queue shards a slot takes only a start job of its own worker's queue: a question whose
// run is in another shard waits in that shard's queue, and every question still starts exactly once.
describe('batches over AGENTQ_SHARDS step queues', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [echo], env: { AGENTQ_SHARDS: '3' } });
  });
  afterAll(async () => env.close());

  it('answers every question once; each start job is activated once, in its own shard, eagerly or taken', async () => {
    const questions = Array.from({ length: 12 }, (_, index) => ({ question: `sharded ${index}` }));
    const { batch } = await env.client.batches.submit(
      { collection: 'docs', questions, options: { concurrency: 3, graph: 'echo-rag' } },
      { tenant: 'acme' },
    );
    await eventually(async () => (await env.client.batches.get(batch.id))?.status === 'completed', 30_000);
    const started: string[] = [];
    for (const shard of allShards(3)) {
      const stream = `${stepQueuePrefix(env.config.queuePrefix, shard, 3)}:${STEP_QUEUE}:events`;
      for (const [, fields] of await env.client.store.redis.xrange(stream, '-', '+')) {
        const jobId = fields[fields.indexOf('jobId') + 1] ?? '';
        if (fields[1] !== 'active' || !jobId.startsWith(batch.id) || !jobId.endsWith('.s0.t0')) continue;
        expect(shardOf(jobId.slice(0, -'.s0.t0'.length), 3)).toBe(shard);
        started.push(jobId);
      }
    }
    expect(started.sort()).toEqual(questions.map((_question, index) => `${batch.id}.i${index}.s0.t0`).sort());
    const results = (await env.client.batches.results(batch.id))!;
    expect(results.map((result) => result.status)).toEqual(questions.map(() => 'completed'));
  });
});
