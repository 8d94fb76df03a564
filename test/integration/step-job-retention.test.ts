import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

describe('step job retention', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ env: { AGENTQ_KEEP_COMPLETED_JOBS: '3' } });
  });
  afterAll(async () => env.close());

  it('keeps the last AGENTQ_KEEP_COMPLETED_JOBS completed step jobs, though the jobs carry no retention of their own', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 6 } });
    expect(await env.client.wait(queued.id, { timeoutMs: 20_000 })).toMatchObject({
      status: 'completed',
      stepCount: 6,
    });
    const queue = env.queue(STEP_QUEUE);
    const completed = await queue.getJobs(['completed']);
    expect(completed.map((job) => job.id).sort()).toEqual([
      `${queued.id}.s3.t0`,
      `${queued.id}.s4.t0`,
      `${queued.id}.s5.t0`,
    ]);
    for (const job of completed) expect(job.opts).not.toHaveProperty('removeOnComplete');
  });
});
