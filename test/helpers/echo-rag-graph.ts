import { sleep } from '../../shared/contracts/abort.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';

export interface EchoRagHooks {
  onStart?(runId: string): void;
  onEnd?(runId: string): void;
}

/** Stands in for rag-agent in batch tests: the same input shape; answers `echo: <query>` after a pause. */
export function echoRagGraph({ onStart, onEnd }: EchoRagHooks = {}) {
  return defineGraph({
    name: 'echo-rag',
    state: { query: channel.replace(''), answer: channel.replace('') },
    initialState: (input: unknown) => ({ query: (input as { query: string }).query }),
    output: (state) => ({ answer: state.answer, sources: [{ title: 'echo', path: 'echo.md', page: null, score: 1 }] }),
  })
    .node('answer', async (state, context) => {
      onStart?.(context.runId);
      try {
        await sleep(state.query.includes('slow') ? 400 : 60, context.abortSignal);
      } finally {
        onEnd?.(context.runId);
      }
      return { answer: `echo: ${state.query}` };
    })
    .edge(START, 'answer')
    .edge('answer', END)
    .build();
}
