import { z } from 'zod';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';

/**
 * The `chain` graph's shape with every other step marked `inline: true` (engine v2 item 6): `step` (its
 * own job) then `hop` (a pure transform, run in `step`'s job), N steps in all. What a graph of work
 * nodes with routers or reducers between them gains from inline nodes, against the plain BullMQ chain.
 */
export const inlineChainGraph = defineGraph({
  name: 'bench-chain-inline',
  version: '1',
  input: z.object({ steps: z.number().int().min(1).max(100_000) }),
  state: { steps: channel.replace(0), next: channel.replace(0), visited: channel.append<number>() },
  initialState: (input) => ({ steps: input.steps, next: 0, visited: [] }),
  output: (state) => ({ visited: state.visited }),
})
  .node('step', (state) => ({ visited: state.next, next: state.next + 1 }))
  .node('hop', (state) => ({ visited: state.next, next: state.next + 1 }), { inline: true })
  .edge(START, 'step')
  .route('step', (state) => (state.next < state.steps ? 'hop' : END), ['hop', END])
  .route('hop', (state) => (state.next < state.steps ? 'step' : END), ['step', END])
  .build();
