import type { Message } from '../../shared/contracts/run-record.js';
import type { ScriptedChatRequest, ScriptedResponse } from '../../test/fakes/scripted-openai-server.js';

/**
 * The scripted model's part in a rag-agent run, answering after `latencyMs`: while fewer than `searches`
 * search results are in the conversation, search (the question, then a refined query naming the passage
 * found); after them, answer citing the first passage of the last result. `searches` + 1 model requests
 * per question; with 2, the third request re-sends the whole earlier conversation (passages included), as an
 * agentic RAG that searches again does. (bench/sections/batch-floor.ts has the one-search script as its own copy.)
 */
export function scriptedRagModel(
  latencyMs: number,
  { searches = 1 }: { searches?: number } = {},
): (request: ScriptedChatRequest) => ScriptedResponse {
  return (request) => {
    const messages = request.body.messages as unknown as Message[];
    const results = messages.filter((message) => message.role === 'tool');
    const toolResult = results.at(-1);
    const id = /^\[([0-9a-f]{6})\]/m.exec(String(toolResult?.content ?? ''))?.[1];
    if (!toolResult) {
      const question = messages.find((message) => message.role === 'user')?.content ?? '';
      return { delayMs: latencyMs, toolCalls: [{ name: 'search', arguments: { query: String(question) } }] };
    }
    if (results.length < searches)
      return {
        delayMs: latencyMs,
        toolCalls: [
          {
            name: 'refine_and_search',
            arguments: { refined_query: `more on passage ${id ?? 'none'}`, reason: 'one passage is not enough' },
          },
        ],
      };
    return {
      delayMs: latencyMs,
      toolCalls: [
        {
          name: 'final_answer',
          arguments: { answer: id ? `The passage says so [${id}].` : 'Not found.', citations: id ? [id] : [] },
        },
      ],
    };
  };
}
