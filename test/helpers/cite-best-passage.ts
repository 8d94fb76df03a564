import type { ScriptedChatRequest } from '../fakes/scripted-openai-server.js';

type Message = { role: string; content?: string | null };

/**
 * A scripted rag-agent model: searches the question, then answers citing the best passage that search
 * showed it (the first `[id]` of the tool result), so each answer cites exactly one document and which one
 * follows from the collection as it is.
 */
export function citeBestPassage(request: ScriptedChatRequest) {
  const messages = (request.body as { messages: Message[] }).messages;
  const question = messages.findLast((message) => message.role === 'user')?.content ?? '';
  if (messages.at(-1)?.role !== 'tool') return { toolCalls: [{ name: 'search', arguments: { query: question } }] };
  const id = /\[([0-9a-f]{6})\]/.exec(messages.at(-1)?.content ?? '')?.[1] ?? 'none00';
  return {
    toolCalls: [{ name: 'final_answer', arguments: { answer: `Answer to "${question}" [${id}].`, citations: [id] } }],
  };
}
