import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';

/**
 * `name` at `version`: one node that answers the version that ran it (its output), after `held` settles,
 * so a run can be kept in flight. Graph rollout tests and the rollout bench serve two of these.
 */
export function versionEchoGraph(name: string, version: string, held: Promise<void> = Promise.resolve()) {
  return defineGraph({ name, version, state: { ran: channel.replace('') }, output: (state) => state.ran })
    .node('answer', async () => {
      await held;
      return { ran: version };
    })
    .edge(START, 'answer')
    .edge('answer', END)
    .build();
}
