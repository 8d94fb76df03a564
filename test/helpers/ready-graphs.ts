import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START, type AnyGraph } from '../../shared/graph/graph.js';

/** What each node saw: its name and whether the key its predicate waits for was set when it ran. */
const state = {
  log: channel.append<string>(),
  bDone: channel.replace(false),
  b2Done: channel.replace(false),
  /** The value of the awaited key as the gated node found it (true: it ran only once ready). */
  sawReady: channel.replace<boolean | null>(null),
};

/**
 * Graphs with `ready` nodes, run both in process and on a worker:
 * - `ready-fan`: a fans out to b and c; c waits for b's write (c runs one superstep after b).
 * - `ready-chain`: a fans out to b and c; b → b2; c waits for b2 (asked again after each commit).
 * - `ready-join`: a → b, c; b → d; c → c2 → d; d waits for both branches and runs once.
 * - `ready-never`: a → b, c; c is never ready: the run fails with NODE_NOT_READY once b is done.
 * - `ready-entry`: START → x, never ready: the run fails at once.
 */
export function readyGraphs(): AnyGraph[] {
  const fan = fanOut('ready-fan')
    .node('c', (s) => ({ log: 'c', sawReady: s.bDone }), { ready: (s) => s.bDone })
    .edge('b', END)
    .edge('c', END)
    .build();
  const chain = fanOut('ready-chain')
    .node('b2', () => ({ log: 'b2', b2Done: true }), { inline: true })
    .node('c', (s) => ({ log: 'c', sawReady: s.b2Done }), { ready: (s) => s.b2Done })
    .edge('b', 'b2')
    .edge('b2', END)
    .edge('c', END)
    .build();
  const join = fanOut('ready-join')
    .node('c', () => ({ log: 'c' }))
    .node('c2', () => ({ log: 'c2', b2Done: true }))
    .node('d', (s) => ({ log: 'd', sawReady: s.bDone && s.b2Done }), { ready: (s) => s.bDone && s.b2Done })
    .edge('b', 'd')
    .edge('c', 'c2')
    .edge('c2', 'd')
    .edge('d', END)
    .build();
  const never = fanOut('ready-never')
    .node('c', () => ({ log: 'c' }), { ready: () => false })
    .edge('b', END)
    .edge('c', END)
    .build();
  const entry = defineGraph({ name: 'ready-entry', state })
    .node('x', () => ({ log: 'x' }), { ready: (s) => s.bDone })
    .edge(START, 'x')
    .edge('x', END)
    .build();
  return [fan, chain, join, never, entry];
}

/** a, b (which sets bDone) and the edges a → b, a → c: each graph adds its own c and what follows. */
function fanOut(name: string) {
  return defineGraph({ name, state })
    .node('a', () => ({ log: 'a' }))
    .node('b', () => ({ log: 'b', bDone: true }))
    .edge(START, 'a')
    .edge('a', 'b')
    .edge('a', 'c');
}
