import { describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START, WAITING_KEY, type AnyGraph } from '../../shared/graph/graph.js';
import { runInProcess } from '../../testing/index.js';
import { readyGraphs } from '../helpers/ready-graphs.js';

const graphs = new Map(readyGraphs().map((graph) => [graph.name, graph] as const));
const graph = (name: string): AnyGraph => graphs.get(name)!;
const placed = (steps: { superstep: number; node: string }[]) => steps.map((step) => `${step.superstep}:${step.node}`);

describe('ready(state) on a node, in process', () => {
  it('a branch whose node is not ready waits for the other branch to commit, then runs', async () => {
    const result = await runInProcess(graph('ready-fan'), null);
    expect(result.status).toBe('completed');
    expect(placed(result.steps)).toEqual(['0:a', '1:b', '2:c']);
    // The default output leaves the waiting tasks out; the state keeps them (none left).
    expect(result.output).toEqual({ log: ['a', 'b', 'c'], bDone: true, b2Done: false, sawReady: true });
    expect(result.state[WAITING_KEY]).toEqual([]);
  });

  it('a waiting node is asked again after every commit, inline steps included', async () => {
    const result = await runInProcess(graph('ready-chain'), null);
    expect(result.status).toBe('completed');
    expect(placed(result.steps)).toEqual(['0:a', '1:b', '2:b2', '3:c']);
    expect(result.output).toMatchObject({ sawReady: true });
  });

  it('a join that waits for both branches runs once, after the longer one', async () => {
    const result = await runInProcess(graph('ready-join'), null);
    expect(result.status).toBe('completed');
    expect(placed(result.steps)).toEqual(['0:a', '1:b', '1:c', '2:c2', '3:d']);
    expect(result.output).toMatchObject({ log: ['a', 'b', 'c', 'c2', 'd'], sawReady: true });
  });

  it('a node never ready fails the run with NODE_NOT_READY naming it, once nothing else is left', async () => {
    const result = await runInProcess(graph('ready-never'), null);
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'NODE_NOT_READY', retryable: false, details: { nodes: ['c'] } });
    expect(result.error!.message).toContain("'c'");
    // As when a router throws: the step whose commit found nothing left to run fails the run (b, here).
    expect(result.error!.node).toBe('b');
    expect(placed(result.steps)).toEqual(['0:a']);
  });

  it('an entry node not ready on the initial state, with nothing else to run, fails the run at once', async () => {
    const result = await runInProcess(graph('ready-entry'), null);
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'NODE_NOT_READY', details: { nodes: ['x'] } });
    expect(result.steps).toEqual([]);
  });

  it("a subgraph's ready node waits in the parent's state like the parent's own", async () => {
    const state = { log: channel.append<string>(), bDone: channel.replace(false) };
    const sub = defineGraph({ name: 'ready-sub', state })
      .node('x', () => ({ log: 'x' }), { ready: (s) => s.bDone })
      .edge(START, 'x')
      .edge('x', END)
      .build();
    const parent = defineGraph({ name: 'ready-parent', state })
      .node('a', () => ({ log: 'a' }))
      .node('b', () => ({ log: 'b', bDone: true }))
      .node('sub', sub)
      .edge(START, 'a')
      .edge('a', 'b')
      .edge('a', 'sub')
      .edge('b', END)
      .edge('sub', END)
      .build();
    const result = await runInProcess(parent, null);
    expect(result.status).toBe('completed');
    expect(placed(result.steps)).toEqual(['0:a', '1:b', '2:sub/x']);
    expect(result.output).toEqual({ log: ['a', 'b', 'x'], bDone: true });
  });

  it('a graph without ready nodes has no waiting key; a graph may not declare one', () => {
    const plain = defineGraph({ name: 'plain', state: { n: channel.replace(0) } })
      .node('a', () => ({ n: 1 }))
      .edge(START, 'a')
      .edge('a', END)
      .build();
    expect(Object.keys(plain.channels)).toEqual(['n']);
    expect(WAITING_KEY in graph('ready-fan').channels).toBe(true);
    expect(() =>
      defineGraph({ name: 'taken', state: { [WAITING_KEY]: channel.replace(0) } })
        .node('a', () => ({}))
        .edge(START, 'a')
        .edge('a', END)
        .build(),
    ).toThrow(/reserved/);
  });
});
