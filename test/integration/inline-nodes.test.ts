import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * Nodes marked inline: true run in the job of the step before them, each still its
 * own fenced commit with its own step record and events (those its node emits included), and without a
 * BullMQ job of their own.
 */
const inlineGraph = (impure = false) =>
  defineGraph({
    name: impure ? 'inline-impure' : 'inline-pure',
    version: '1',
    input: z.object({ n: z.number() }),
    state: { n: channel.replace(0), trail: channel.append<string>() },
    initialState: (input) => ({ n: input.n, trail: [] }),
    output: (state) => ({ n: state.n, trail: state.trail }),
  })
    .node('work', (state) => ({ n: state.n + 1, trail: 'work' }))
    .node(
      'double',
      async (state, context) => {
        if (impure) await context.memo('x', async () => 1);
        return { n: state.n * 2, trail: 'double' };
      },
      { inline: true },
    )
    .node(
      'label',
      async (state, context) => {
        await context.emit('tool-result', { toolCallId: 'label', tool: 'label', n: state.n });
        return { trail: `label:${state.n}`, messages: [{ role: 'assistant' as const, content: `n=${state.n}` }] };
      },
      { inline: true },
    )
    .node('finish', (state) => ({ trail: `finish:${state.n}` }))
    .edge(START, 'work')
    .edge('work', 'double')
    .edge('double', 'label')
    .route('label', (state) => (state.n > 100 ? END : 'finish'), ['finish', END])
    .edge('finish', END)
    .build();

describe('inline nodes', () => {
  let env: TestEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it('run in the job of the step before them: own step records, events and history, no job of their own', async () => {
    env = await startTestEnv({ graphs: [inlineGraph()] });
    const run = await env.client.enqueue({ graph: 'inline-pure', input: { n: 3 } });
    const done = await env.client.wait(run.id);
    expect(done).toMatchObject({
      status: 'completed',
      output: { n: 8, trail: ['work', 'double', 'label:8', 'finish:8'] },
      stepCount: 4,
    });
    const steps = await env.client.steps(run.id);
    expect(steps.map((step) => [step.superstep, step.node])).toEqual([
      [0, 'work'],
      [1, 'double'],
      [2, 'label'],
      [3, 'finish'],
    ]);
    const events = await env.client.store.eventLog.events(run.id);
    const starts = events.filter((event) => event.type === 'step-start').map((event) => event.data.node);
    const ends = events.filter((event) => event.type === 'step-end').map((event) => event.data.node);
    expect(starts).toEqual(['work', 'double', 'label', 'finish']);
    expect(ends).toEqual(['work', 'double', 'label', 'finish']);
    // An event an inline node emits is written with its commit, between its step-start and step-end.
    const labelled = events
      .filter((event) => event.data.node === 'label')
      .map((event) => [event.type, event.data.superstep, event.data.n]);
    expect(labelled).toEqual([
      ['step-start', 2, undefined],
      ['tool-result', 2, 8],
      ['step-end', 2, undefined],
    ]);
    expect((await env.client.messages(run.id)).map((message) => message.content)).toEqual(['n=8']);
    const queue = env.queue(STEP_QUEUE, run.id);
    const jobs = await Promise.all([0, 1, 2, 3].map((superstep) => queue.getJob(`${run.id}.s${superstep}.t0`)));
    expect(jobs.map((job) => job !== undefined && job !== null)).toEqual([true, false, false, true]);
  });

  it('an inline node that ends the run completes it in the same job', async () => {
    env = await startTestEnv({ graphs: [inlineGraph()] });
    const run = await env.client.enqueue({ graph: 'inline-pure', input: { n: 60 } });
    expect(await env.client.wait(run.id)).toMatchObject({
      status: 'completed',
      output: { n: 122, trail: ['work', 'double', 'label:122'] },
      stepCount: 3,
    });
    expect(await env.queue(STEP_QUEUE, run.id).getJob(`${run.id}.s2.t0`)).toBeFalsy();
  });

  it('an inline node that needs a step of its own (here memo) runs as its own job instead, and the run completes', async () => {
    env = await startTestEnv({ graphs: [inlineGraph(true)] });
    const run = await env.client.enqueue({ graph: 'inline-impure', input: { n: 3 } });
    expect(await env.client.wait(run.id)).toMatchObject({
      status: 'completed',
      output: { n: 8, trail: ['work', 'double', 'label:8', 'finish:8'] },
    });
    const queue = env.queue(STEP_QUEUE, run.id);
    // 'double' fell back to a job of its own; 'label' after it ran inline in that job.
    expect(await queue.getJob(`${run.id}.s1.t0`)).toBeTruthy();
    expect(await queue.getJob(`${run.id}.s2.t0`)).toBeFalsy();
  });

  it('stops inlining at the run step limit, so MAX_STEPS fails the run as without inline nodes', async () => {
    env = await startTestEnv({ graphs: [inlineGraph()] });
    const run = await env.client.enqueue({ graph: 'inline-pure', input: { n: 3 }, options: { maxSteps: 2 } });
    const done = await env.client.wait(run.id);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('MAX_STEPS');
    expect(done.stepCount).toBe(2);
  });
});
