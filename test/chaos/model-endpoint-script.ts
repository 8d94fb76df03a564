import type { ChatScript, ScriptedChatRequest, ScriptedResponse } from '../fakes/scripted-openai-server.js';

/** The last user message of a chat request: a react-agent run's query, which tells concurrent runs apart. */
export function queryOf(request: ScriptedChatRequest): string {
  const users = request.body.messages.filter((message) => message.role === 'user');
  const content = users.at(-1)?.content;
  return typeof content === 'string' ? content : JSON.stringify(content);
}

/**
 * A chat script that answers each query from its own queue, so several runs in flight at once each
 * meet exactly their scripted faults whatever order their requests arrive in. A query without a
 * script, or one whose queue ran out, gets a loud 500 that fails its test.
 */
export function scriptPerQuery(scripts: ReadonlyMap<string, readonly ScriptedResponse[]>): ChatScript {
  const used = new Map<string, number>();
  return (request) => {
    const query = queryOf(request);
    const position = used.get(query) ?? 0;
    used.set(query, position + 1);
    return (
      scripts.get(query)?.[position] ?? {
        status: 500,
        code: 'script_exhausted',
        message: `model-endpoint script: no answer #${position + 1} for query ${JSON.stringify(query)}`,
      }
    );
  };
}

/** The time between consecutive requests, in ms, in arrival order. */
export function gapsBetween(requests: readonly ScriptedChatRequest[]): number[] {
  const times = requests.map((request) => request.receivedAt);
  return times.slice(1).map((time, index) => time - times[index]!);
}
