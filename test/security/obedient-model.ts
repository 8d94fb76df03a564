import type { ScriptedChatRequest, ScriptedResponse, ScriptedToolCall } from '../fakes/scripted-openai-server.js';

/**
 * A deliberately obedient scripted model: it does whatever any text it is shown tells it to. Every
 * `CALL TOOL <name> <json> END` line in any message it receives (the user's, a tool result, a passage
 * of a document) becomes a tool call, whether or not the request offers that tool; every
 * `CITE <id> END` becomes a citation. Without such lines it behaves like an ordinary RAG model:
 * it searches the question when `search` is offered, then calls `final_answer` citing every passage
 * id it was shown; a request without RAG tools gets a plain text answer.
 *
 * Directives are obeyed once per turn (the messages after the last user message), so a loop ends.
 */
const CALL = /CALL TOOL ([A-Za-z0-9_-]+) (\{.*?\}) END/g;
const CITE = /CITE ([A-Za-z0-9_-]+) END/g;
/** How rag-agent shows a passage: `[id] title (path)` at the start of a line. */
const PASSAGE_ID = /^\[([0-9a-f]{6,})\] /gm;

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: { function: { name: string; arguments: string } }[];
}

const textOf = (message: ChatMessage): string =>
  typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '');
const callKey = (name: string, args: string): string => `${name} ${JSON.stringify(JSON.parse(args))}`;

export function obedientModel(request: ScriptedChatRequest): ScriptedResponse {
  const messages = request.body.messages as unknown as ChatMessage[];
  const offered = new Set(
    (request.body.tools ?? []).map((tool) => (tool.type === 'function' ? tool.function.name : '')),
  );
  const shown = messages
    .filter((message) => message.role !== 'assistant')
    .map(textOf)
    .join('\n');
  const lastUser = messages.map((message) => message.role).lastIndexOf('user');
  const turn = messages.slice(lastUser + 1);
  const calledThisTurn = new Set(
    turn
      .flatMap((message) => message.tool_calls ?? [])
      .map((call) => callKey(call.function.name, call.function.arguments)),
  );

  const directives: ScriptedToolCall[] = [];
  for (const [, name, args] of shown.matchAll(CALL)) {
    if (
      calledThisTurn.has(callKey(name!, args!)) ||
      directives.some((call) => callKey(call.name, call.arguments as string) === callKey(name!, args!))
    )
      continue;
    directives.push({ name: name!, arguments: args! });
  }
  if (directives.length > 0) return { toolCalls: directives };

  const toolResults = messages.filter((message) => message.role === 'tool').map(textOf);
  const searched = toolResults.some(
    (content) => content.startsWith('Passages for') || content.startsWith('No passage matches'),
  );
  if (offered.has('search') && !searched) {
    const question = textOf(messages.find((message) => message.role === 'user') ?? { role: 'user', content: '' });
    return { toolCalls: [{ name: 'search', arguments: { query: question.slice(0, 200) } }] };
  }
  if (offered.has('final_answer')) {
    const ids = [
      ...new Set(
        [...toolResults.join('\n').matchAll(PASSAGE_ID)]
          .map((match) => match[1]!)
          .concat([...shown.matchAll(CITE)].map((match) => match[1]!)),
      ),
    ];
    return {
      toolCalls: [
        {
          name: 'final_answer',
          arguments: { answer: `Here is what I found. ${ids.map((id) => `[${id}]`).join(' ')}`, citations: ids },
        },
      ],
    };
  }
  return { content: 'Done as instructed.' };
}
