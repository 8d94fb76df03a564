import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import type { StepObservation } from '../../shared/graph/step-observer.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

/** Async routers (from START and after a node) and two parallel branches. */
const outer = defineGraph({ name: 'outer', state: { count: channel.replace(0), seen: channel.append<string>() } })
  .node('a', (state) => ({ count: state.count + 1, seen: 'a' }))
  .node('left', () => ({ seen: 'left' }))
  .node('right', () => ({ seen: 'right' }))
  .node('skipped', () => ({ seen: 'skipped' }))
  .route(START, async () => (await pause(), 'a'), ['a'])
  .route('a', async (state) => (await pause(), state.count === 1 ? ['left', 'right'] : 'skipped'), [
    'left',
    'right',
    'skipped',
  ])
  .edge('left', END)
  .edge('right', END)
  .edge('skipped', END)
  .build();

describe('step observers', () => {
  let env: TestEnv;
  const starts: StepObservation[] = [];
  const ends: StepObservation[] = [];
  beforeAll(async () => {
    env = await startTestEnv({
      graphs: [outer],
      observers: [
        { onNodeStart: (observation) => starts.push(observation), onNodeEnd: (observation) => ends.push(observation) },
      ],
    });
  });
  afterAll(async () => env.close());

  it('see every node with the graph as name@version, its output and the state after its commit; async routers route', async () => {
    const queued = await env.client.enqueue({ graph: 'outer', input: {} });
    const done = await env.client.wait(queued.id, { timeoutMs: 15_000 });
    expect(done).toMatchObject({ status: 'completed', output: { count: 1, seen: ['a', 'left', 'right'] } });
    const mine = (list: StepObservation[]) => list.filter((observation) => observation.runId === queued.id);
    // The parallel branches may start in either order.
    expect(
      mine(starts)
        .map((observation) => `${observation.graph} ${observation.node}`)
        .sort(),
    ).toEqual(['outer@1 a', 'outer@1 left', 'outer@1 right']);
    const endOf = (node: string) => mine(ends).find((observation) => observation.node === node)!;
    expect(endOf('a')).toMatchObject({
      graph: 'outer@1',
      outcome: 'ok',
      output: { count: 1, seen: 'a' },
      state: { count: 1, seen: ['a'] },
    });
    expect(Object.isFrozen(endOf('a').state)).toBe(true);
    expect(endOf('left')).toMatchObject({ superstep: 1, output: { seen: 'left' }, state: { seen: ['a', 'left'] } });
    expect(endOf('a').endedAt).toBeGreaterThanOrEqual(endOf('a').startedAt);
  });
});
