import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START, Send } from '../../shared/graph/graph.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { Calls } from '../helpers/test-graphs.js';
import { contractGraphs } from '../helpers/contract-graphs.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const calls = new Calls();

const fanOut = defineGraph({
  name: 'fan',
  state: {
    log: channel.append<string>(),
    total: channel.custom<number, number>((current, add) => current + add, 0),
    last: channel.replace(''),
  },
  output: (state) => state,
})
  .node('split', () => ({ log: 'split' }))
  .node('a', async (_s, context) => {
    calls.hit(context.runId, 'a');
    await new Promise((resolve) => setTimeout(resolve, 60)); // finish last, yet merge first (task order)
    return { log: 'a', total: 1, last: 'a' };
  })
  .node('b', () => ({ log: 'b', total: 10, last: 'b' }))
  .node('c', () => ({ log: 'c', total: 100, last: 'c', messages: [{ role: 'assistant' as const, content: 'from c' }] }))
  .node('join', (_s, context) => {
    calls.hit(context.runId, 'join');
    return { log: 'join' };
  })
  .edge(START, 'split')
  .edge('split', 'a')
  .edge('split', 'b')
  .edge('split', 'c')
  .edge('a', 'join')
  .edge('b', 'join')
  .edge('c', 'join')
  .edge('join', END)
  .build();

const mapReduce = defineGraph({
  name: 'map',
  input: undefined,
  state: { items: channel.replace<number[]>([]), squares: channel.append<number>() },
  initialState: (input: unknown) => ({ items: (input as { items: number[] }).items }),
  output: (state) => state.squares,
})
  .node('plan', () => ({}))
  .node('square', (_s, context) => ({ squares: (context.arg as number) ** 2 }))
  .edge(START, 'plan')
  .route('plan', (state) => state.items.map((item) => new Send('square', item)), ['square'])
  .edge('square', END)
  .build();

const [, , , outer, approval] = contractGraphs({ onNode: (runId, node) => calls.hit(runId, node) });

describe('graph execution through the queue', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [fanOut, mapReduce, outer!, approval!] });
  });
  afterAll(async () => env.close());

  it('runs parallel branches as sibling jobs of one superstep and merges their writes through the reducers', async () => {
    const queued = await env.client.enqueue({ graph: 'fan', input: null });
    const done = await env.client.wait(queued.id);
    expect(done.status).toBe('completed');
    // Task order, not finishing order: a sleeps yet merges first. join runs once.
    expect(done.output).toEqual({ log: ['split', 'a', 'b', 'c', 'join'], total: 111, last: 'c' });
    expect(calls.of(queued.id, 'join')).toBe(1);
    const steps = await env.client.steps(queued.id);
    expect(steps.map((step) => step.superstep)).toEqual([0, 1, 1, 1, 2]);
    expect(steps.map((step) => step.index)).toEqual([0, 1, 2, 3, 4]);
    expect(await env.client.messages(queued.id)).toEqual([{ role: 'assistant', content: 'from c' }]);
    const ids = await eventually(async () => {
      const found = (await env.queue(STEP_QUEUE).getJobs(['completed']))
        .map((job) => job.id!)
        .filter((id) => id.startsWith(`${queued.id}.s1.`));
      return found.length === 3 && found.sort();
    });
    expect(ids).toEqual([`${queued.id}.s1.t0`, `${queued.id}.s1.t1`, `${queued.id}.s1.t2`]);
  });

  it('fans one node out over many inputs with Send', async () => {
    const queued = await env.client.enqueue({ graph: 'map', input: { items: [1, 2, 3, 4] } });
    const done = await env.client.wait(queued.id);
    expect(done.output).toEqual([1, 4, 9, 16]);
  });

  it('runs a subgraph as nodes of the parent, each its own step', async () => {
    const queued = await env.client.enqueue({ graph: 'contract-subgraph', input: null });
    const done = await env.client.wait(queued.id);
    expect(done.output).toEqual(['pre', 'x', 'y', 'post']);
    expect((await env.client.steps(queued.id)).map((step) => step.node)).toEqual(['pre', 'sub/x', 'sub/y', 'post']);
  });

  it('a node can interrupt the run; resume continues from that step with the given value', async () => {
    const queued = await env.client.enqueue({ graph: 'contract-interrupt', input: null });
    const waiting = await env.client.wait(queued.id);
    expect(waiting.status).toBe('waiting');
    expect(waiting.interrupt).toEqual({
      node: 'ask',
      stepId: 's1.t0',
      request: { question: 'approve "pay 100 EUR"?' },
    });
    await expect(env.client.retry(queued.id)).rejects.toThrow(/only a failed run can be retried/);
    const resumed = await env.client.resume(queued.id, { approved: true });
    expect(resumed.interrupt).toBeNull();
    const done = await env.client.wait(queued.id);
    expect(done).toMatchObject({ status: 'completed', output: { draft: 'pay 100 EUR', verdict: 'approved' } });
    expect((await env.client.steps(queued.id)).map((step) => step.node)).toEqual(['write', 'ask']);
    expect(calls.of(queued.id, 'ask')).toBe(2);
    await expect(env.client.resume(queued.id, {})).rejects.toThrow(/only a waiting run can be resumed/);
    const types: string[] = [];
    for await (const event of env.client.events(queued.id)) types.push(event.type);
    expect(types).toContain('run-waiting');
    expect(types).toContain('run-resume');
    expect(types.at(-1)).toBe('run-end');
  });

  it('cancelling a waiting run ends it at once', async () => {
    const queued = await env.client.enqueue({ graph: 'contract-interrupt', input: null });
    expect((await env.client.wait(queued.id)).status).toBe('waiting');
    expect((await env.client.cancel(queued.id)).status).toBe('cancelled');
  });
});
