import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** Questions containing "fail" fail (one attempt) while `failing` is on; a retried one waits for `gate`. */
let failing = true;
let gate: Promise<void> = Promise.resolve();
const flaky = defineGraph({
  name: 'flaky-rag',
  state: { query: channel.replace(''), answer: channel.replace('') },
  initialState: (input: unknown) => ({ query: (input as { query: string }).query }),
  output: (state) => ({ answer: state.answer, sources: [] }),
})
  .node(
    'answer',
    async (state) => {
      if (state.query.includes('fail')) {
        if (failing) throw new AgentqError('INVALID_INPUT', 'this question fails on purpose');
        await gate;
      }
      return { answer: `echo: ${state.query}` };
    },
    { retry: { maxAttempts: 1 } },
  )
  .edge(START, 'answer')
  .edge('answer', END)
  .build();

/**
 * A batch's progress counts its finished runs as they finish (the release script) and reads only the
 * runs in flight: the same figures as reading every run, a retried run counted as running again and
 * then as what it ended as, and a batch made before the counts were kept still read run by run.
 */
describe('batch progress', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [flaky] });
  });
  afterAll(async () => env.close());

  it('counts finished runs once, moves a retried run from failed to running to completed, and reads old batches run by run', async () => {
    const questions = ['one', 'two', 'fail three', 'four', 'five'].map((question) => ({ question }));
    const { batch } = await env.client.batches.submit(
      { collection: 'docs', questions, options: { concurrency: 2, graph: 'flaky-rag' } },
      { tenant: 'acme' },
    );
    const done = await eventually(async () => {
      const record = await env.client.batches.get(batch.id);
      return record?.status === 'completed' && record;
    }, 30_000);
    expect(done.progress).toEqual({ total: 5, queued: 0, running: 0, completed: 4, failed: 1, cancelled: 0 });

    // The finished batch read run by run (as a batch made before the counts were kept is): the same figures.
    const metaKey = env.client.store.keys.batch(batch.id).meta;
    await env.client.store.redis.hdel(metaKey, 'countsDone');
    expect((await env.client.batches.get(batch.id))?.progress).toEqual(done.progress);
    await env.client.store.redis.hset(metaKey, 'countsDone', '1');

    // The failed question retried in place: running (not failed) while it works, completed after.
    const failedRun = `${batch.id}.i2`;
    expect((await env.client.get(failedRun))?.status).toBe('failed');
    failing = false;
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    await env.client.retry(failedRun);
    expect((await env.client.batches.get(batch.id))?.progress).toEqual({
      total: 5,
      queued: 0,
      running: 1,
      completed: 4,
      failed: 0,
      cancelled: 0,
    });
    open();
    await env.client.wait(failedRun, { timeoutMs: 30_000 });
    const after = await eventually(async () => {
      const record = await env.client.batches.get(batch.id);
      return record?.progress.completed === 5 && record;
    }, 30_000);
    expect(after.progress).toEqual({ total: 5, queued: 0, running: 0, completed: 5, failed: 0, cancelled: 0 });
    // Each run counted once whatever re-delivered its finish: the counts add up to the runs. The progress
    // above reads a run in flight from the run itself, so it can say completed before the finish hook
    // (which first adds the run's usage to the batch) has counted it: wait for the count, then compare.
    const doneKey = env.client.store.keys.batch(batch.id).done;
    const counted = await eventually(async () => {
      const fields = await env.client.store.redis.hgetall(doneKey);
      return Object.keys(fields).length >= 5 && fields;
    }, 30_000);
    expect(Object.keys(counted).sort()).toEqual([0, 1, 2, 3, 4].map((index) => `${batch.id}.i${index}`).sort());
    expect(new Set(Object.values(counted))).toEqual(new Set(['completed']));
  });
});
