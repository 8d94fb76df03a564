import { describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { backoffDelay, resolveRetryPolicy } from '../../shared/graph/retry-policy.js';
import { GraphRegistry } from '../../shared/graph/graph-registry.js';

const state = { log: channel.append<string>() };
const noop = () => ({});

describe('building a graph', () => {
  it('rejects an edge to an unknown node, naming it', () => {
    expect(() => defineGraph({ name: 'g', state }).node('a', noop).edge(START, 'a').edge('a', 'ghost').build()).toThrow(
      "graph 'g': edge from 'a' to unknown node 'ghost'",
    );
  });

  it('rejects an edge from an unknown node', () => {
    expect(() =>
      defineGraph({ name: 'g', state }).node('a', noop).edge(START, 'a').edge('a', END).edge('zz', 'a').build(),
    ).toThrow("edge from unknown node 'zz'");
  });

  it('rejects an unreachable node, naming it', () => {
    expect(() =>
      defineGraph({ name: 'g', state })
        .node('a', noop)
        .node('island', noop)
        .edge(START, 'a')
        .edge('a', END)
        .edge('island', END)
        .build(),
    ).toThrow("node 'island' is unreachable from START");
  });

  it('rejects a node with no path to END, naming it', () => {
    expect(() =>
      defineGraph({ name: 'g', state })
        .node('a', noop)
        .node('loop', noop)
        .edge(START, 'a')
        .route('a', () => END, ['loop', END])
        .edge('loop', 'loop')
        .build(),
    ).toThrow("node 'loop' has no path to END");
  });

  it('rejects a node without an outgoing edge, saying how to end it', () => {
    expect(() => defineGraph({ name: 'g', state }).node('a', noop).edge(START, 'a').build()).toThrow(
      "node 'a' has no outgoing edge (add .edge('a', END) if it ends the run)",
    );
  });

  it('rejects a graph without an entry, duplicate nodes, bad names and the reserved messages key', () => {
    expect(() => defineGraph({ name: 'g', state }).node('a', noop).edge('a', END).build()).toThrow(/has no entry/);
    expect(() => defineGraph({ name: 'g', state }).node('a', noop).node('a', noop)).toThrow(
      "node 'a' is defined twice",
    );
    expect(() => defineGraph({ name: 'g', state }).node('a:b', noop)).toThrow(/node name 'a:b'/);
    expect(() =>
      defineGraph({ name: 'g', state: { messages: channel.append<string>() } })
        .node('a', noop)
        .edge(START, 'a')
        .edge('a', END)
        .build(),
    ).toThrow(/'messages' is reserved/);
  });

  it('rejects a subgraph whose state keys the parent lacks', () => {
    const sub = defineGraph({ name: 's', state: { other: channel.replace(0) } })
      .node('x', noop)
      .edge(START, 'x')
      .edge('x', END)
      .build();
    expect(() =>
      defineGraph({ name: 'g', state }).node('sub', sub).edge(START, 'sub').edge('sub', END).build(),
    ).toThrow("subgraph node 'sub' uses state key 'other', which this graph lacks");
  });

  it('rejects a router result outside its declared targets at run time', () => {
    const graph = defineGraph({ name: 'g', state })
      .node('a', noop)
      .node('b', noop)
      .node('c', noop)
      .edge(START, 'a')
      .route('a', () => 'c', ['b', END])
      .edge('b', 'c')
      .edge('c', END)
      .build();
    expect(() => graph.next('a', { log: [] })).toThrow(
      "returned 'c', which is not among its declared targets [b, __end__]",
    );
  });

  it('computes entry, next tasks and END for static and dynamic edges', () => {
    const graph = defineGraph({ name: 'g', version: '2', state: { n: channel.replace(0) } })
      .node('a', noop)
      .node('b', noop)
      .node('c', noop)
      .edge(START, 'a')
      .route('a', (s) => (s.n > 1 ? ['b', 'c'] : END), ['b', 'c', END])
      .edge('b', END)
      .edge('c', END)
      .build();
    expect(graph.id).toBe('g@2');
    expect(graph.entry({ n: 0 })).toEqual([{ node: 'a' }]);
    expect(graph.next('a', { n: 0 })).toEqual([]);
    expect(graph.next('a', { n: 2 })).toEqual([{ node: 'b' }, { node: 'c' }]);
  });
});

describe('retry policy', () => {
  it('grows exponentially, caps at maxDelayMs and jitters within [50%, 100%]', () => {
    const policy = resolveRetryPolicy({ initialDelayMs: 100, backoffFactor: 2, maxDelayMs: 1000, jitter: false });
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay(policy, attempt))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
    const jittered = resolveRetryPolicy({ initialDelayMs: 100, jitter: true });
    expect(backoffDelay(jittered, 2, () => 0)).toBe(100);
    expect(backoffDelay(jittered, 2, () => 1)).toBe(200);
  });

  it('refuses maxAttempts below 1', () => {
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(/maxAttempts must be an integer ≥ 1/);
  });
});

describe('graph registry', () => {
  it('finds graphs by name@version and by name (latest)', () => {
    const v1 = defineGraph({ name: 'g', version: '1', state }).node('a', noop).edge(START, 'a').edge('a', END).build();
    const v2 = defineGraph({ name: 'g', version: '2', state }).node('a', noop).edge(START, 'a').edge('a', END).build();
    const registry = new GraphRegistry([v1, v2]);
    expect(registry.find('g')?.id).toBe('g@2');
    expect(registry.find('g', '1')?.id).toBe('g@1');
    expect(registry.find('g', '3')).toBeUndefined();
    expect(() => registry.register(v1)).toThrow(/registered twice/);
  });
});
