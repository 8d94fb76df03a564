import type { Message } from '../../../shared/contracts/run-record.js';

/**
 * The prompt's history cut to its last `size` messages, the system prompt kept in front and the
 * latest user message pinned after it when it falls outside (the model must still see what it is
 * asked). The window never starts at a tool result: it reaches back to the assistant message that
 * called the tool, so what the model is sent stays valid (every tool call answered) — a window may then hold a
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

/**
 * A window that keeps a run's request in view (reflect's task, multi-agent's query) while later
 * messages (drafts and critiques, consultations) come and go: the history up to and including the
 * request windowed (the system prompt, the last `size` messages of a conversation's earlier turns, the
 * request), then the last `size` messages after it, then `added`. While `added` opens the turn (it holds
 * the request), the earlier history is windowed as it is. The request is the latest user message with
 * its text; a history without it (a run from before) is windowed as it is.
 */
export function requestWindow(
  history: readonly Message[],
  { request, added, size }: { request: string; added: readonly Message[]; size: number },
): Message[] {
  const opening = added.some((message) => message.role === 'user' && message.content === request);
  const at = opening ? -1 : history.findLastIndex((message) => message.role === 'user' && message.content === request);
  if (at < 0) return [...messageWindow(history, size), ...added];
  return [...messageWindow(history.slice(0, at + 1), size), ...messageWindow(history.slice(at + 1), size), ...added];
}
