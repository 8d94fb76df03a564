import type { Message } from '../../../shared/contracts/run-record.js';

/**
 * The prompt's history cut to its last `size` messages, the system prompt kept in front and the
 * latest user message pinned after it when it falls outside (the model must still see what it is
 * asked). The window never starts at a tool result: it reaches back to the assistant message that
 * called the tool, so what the model is sent stays valid (invariant I3) — a window may then hold a
 * few more than `size`.
 */
export function messageWindow(messages: readonly Message[], size: number): Message[] {
  const system = messages[0]?.role === 'system' ? [messages[0]] : [];
  const body = messages.slice(system.length);
  if (body.length <= size) return [...messages];
  let start = body.length - size;
  while (start > 0 && body[start]!.role === 'tool') start -= 1;
  const latestUser = body.findLastIndex((message) => message.role === 'user');
  const pinned = latestUser >= 0 && latestUser < start ? [body[latestUser]!] : [];
  return [...system, ...pinned, ...body.slice(start)];
}
