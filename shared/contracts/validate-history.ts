import type { Message } from './run-record.js';

/**
 * Checks that a history stays valid, so it can always be sent back to an OpenAI-compatible API: every assistant message
 * with tool calls is followed by exactly one tool message per call id, so the history can always be sent back to an
 * OpenAI-compatible API. Returns the problems found, each naming the message's position; an empty list means valid.
 *
 * The tool messages answering a call must come right after its assistant message (other tool
 * messages of the same call may come in any order), before any other message.
 */
export function validateHistory(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  let open: { index: number; ids: Set<string>; answered: Set<string> } | undefined;

  const close = (before: number) => {
    if (!open) return;
    const missing = [...open.ids].filter((id) => !open!.answered.has(id));
    if (missing.length > 0) {
      problems.push(
        `message ${open.index} (assistant) has tool call${missing.length > 1 ? 's' : ''} ${missing.join(', ')} without a tool message before message ${before}`,
      );
    }
    open = undefined;
  };

  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      const id = message.tool_call_id;
      if (!id) {
        problems.push(`message ${index} (tool) has no tool_call_id`);
      } else if (!open || !open.ids.has(id)) {
        problems.push(`message ${index} (tool) answers '${id}', which the assistant message before it did not call`);
      } else if (open.answered.has(id)) {
        problems.push(`message ${index} (tool) answers '${id}' a second time`);
      } else {
        open.answered.add(id);
      }
      return;
    }
    close(index);
    if (message.role === 'assistant' && message.tool_calls && message.tool_calls.length > 0) {
      const ids = new Set<string>();
      for (const call of message.tool_calls) {
        if (ids.has(call.id)) problems.push(`message ${index} (assistant) uses tool call id '${call.id}' twice`);
        ids.add(call.id);
      }
      open = { index, ids, answered: new Set() };
    }
  });
  close(messages.length);
  return problems;
}
