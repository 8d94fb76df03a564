/**
 * The model-calling benchmark graph: 10 nodes in a row, each making one chat request through the real
 * `openai` SDK (shared/adapters/openai/openai-language-model.ts) to the scripted OpenAI-compatible server and
 * appending the answer to the state. agentq runs it as `bench-model` (bench/workers/engine-worker.ts);
 * LangGraph.js runs the same nodes (bench/workers/langgraph-worker.ts), so both do the same model work.
 */
import { z } from 'zod';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import type { LanguageModelRequest } from '../../shared/ports/language-model.js';

export const MODEL_GRAPH_NAME = 'bench-model';
export const MODEL_GRAPH_NODES = 10;
/** The model id the graphs ask for; the scripted server answers any. */
export const MODEL_GRAPH_MODEL = 'scripted-chat';

export const nodeName = (index: number) => `n${index}`;

/** Node `index`'s chat request: the same small prompt on both engines. */
export function nodeRequest(index: number): Omit<LanguageModelRequest, 'abortSignal'> {
  return {
    messages: [{ role: 'user', content: `Step ${index + 1} of ${MODEL_GRAPH_NODES}: answer with one word.` }],
    maxTokens: 16,
  };
}

/**
 * agentq's side. Each node calls the model the way agentq's own graphs do (`callLanguageModel`): the
 * response is saved with `context.memo` before it is used, so a re-run step does not pay again, and
 * its usage is recorded on the step. That bookkeeping is part of what agentq's figures measure.
 */
function buildModelGraph() {
  const builder = defineGraph({
    name: MODEL_GRAPH_NAME,
    version: '1',
    input: z.object({}).strict(),
    state: { answers: channel.append<string>() },
    initialState: () => ({}),
    output: (state) => ({ answers: state.answers }),
  });
  for (let index = 0; index < MODEL_GRAPH_NODES; index += 1) {
    builder.node(nodeName(index), async (_state, context) => {
      const response = await callLanguageModel(context, nodeRequest(index));
      return { answers: response.message.content ?? '' };
    });
    builder.edge(index === 0 ? START : nodeName(index - 1), nodeName(index));
  }
  return builder.edge(nodeName(MODEL_GRAPH_NODES - 1), END).build();
}

export const benchModelGraph = buildModelGraph();
