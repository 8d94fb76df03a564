import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';

/** What the `waiter` graph waits for: its input. */
export interface WaitInput {
  name: string;
  key?: string;
  timeoutMs?: number;
  match?: Record<string, unknown>;
}

/**
 * `waiter`: one node that waits with `context.waitFor(input.name, input)` and outputs the event's data and
 * key, or 'timed out'; `onRun` is told each time the node runs (a woken step runs it again).
 */
export function waiterGraph(onRun: (runId: string) => void = () => undefined) {
  return defineGraph({
    name: 'waiter',
    input: undefined,
    state: { ask: channel.replace<WaitInput>({ name: '' }), got: channel.replace<unknown>(null) },
    initialState: (input: unknown) => ({ ask: input as WaitInput }),
    output: (state) => state.got,
  })
    .node('wait', async (state, context) => {
      onRun(context.runId);
      const { name, ...options } = state.ask;
      const outcome = await context.waitFor(name, options);
      return {
        got: 'timedOut' in outcome ? 'timed out' : { data: outcome.event.data, key: outcome.event.key ?? null },
      };
    })
    .edge(START, 'wait')
    .edge('wait', END)
    .build();
}
