import type { Message } from '../../shared/contracts/run-record.js';
import type { ScriptedChatRequest, ScriptedResponse } from '../../test/fakes/scripted-openai-server.js';

/**
 * The scripted model's part in a rag-agent run, answering after `latencyMs`: with no search result in
 * the conversation yet, search for the question; after one, answer citing the first passage shown. Two
 * model requests per question. (bench/sections/batch-floor.ts has the same script as its own copy.)
 */
export function scriptedRagModel(latencyMs: number): (request: ScriptedChatRequest) => ScriptedResponse {
  return (request) => {
    const messages = request.body.messages as unknown as Message[];
    const toolResult = messages.filter((message) => message.role === 'tool').at(-1);
    if (!toolResult) {
      const question = messages.find((message) => message.role === 'user')?.content ?? '';
      return { delayMs: latencyMs, toolCalls: [{ name: 'search', arguments: { query: String(question) } }] };
    }
    const id = /^\[([0-9a-f]{6})\]/m.exec(String(toolResult.content ?? ''))?.[1];
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
