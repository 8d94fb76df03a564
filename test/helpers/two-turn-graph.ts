import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';

/**
 * A multi-turn agent for provider-batch tests: two steps, each one model call, the second asking about
 * the first's answer (so it cannot be sent before the first is answered). Takes the batch's RAG input.
 */
export function twoTurnGraph() {
  return defineGraph({
    name: 'two-turns',
    state: { query: channel.replace(''), first: channel.replace(''), answer: channel.replace('') },
    initialState: (input: unknown) => ({ query: (input as { query: string }).query }),
    output: (state) => ({ answer: state.answer, sources: [] }),
  })
    .node('draft', async (state, context) => {
      const response = await callLanguageModel(context, { messages: [{ role: 'user', content: state.query }] });
      return { first: response.message.content ?? '' };
    })
    .node('refine', async (state, context) => {
      const response = await callLanguageModel(context, {
        messages: [
          { role: 'user', content: state.query },
          { role: 'assistant', content: state.first },
          { role: 'user', content: 'Now say it better.' },
        ],
      });
      return { answer: response.message.content ?? '' };
    })
    .edge(START, 'draft')
    .edge('draft', 'refine')
    .edge('refine', END)
    .build();
}
