import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';

const call = (id: string, name = 'calculator') => ({
  id,
  type: 'function' as const,
  function: { name, arguments: '{}' },
});
const asks = (...ids: string[]): Message => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => call(id)),
});
const answers = (id: string): Message => ({ role: 'tool', tool_call_id: id, content: 'ok' });
const user: Message = { role: 'user', content: 'hi' };

describe('validateHistory (invariant I3)', () => {
  it('accepts a conversation where every call is answered once, in any order', () => {
    expect(
      validateHistory([
        { role: 'system', content: 's' },
        user,
        asks('a', 'b'),
        answers('b'),
        answers('a'),
        { role: 'assistant', content: 'done' },
      ]),
    ).toEqual([]);
    expect(validateHistory([])).toEqual([]);
  });

  it('reports a call without a result, before the next message and at the end', () => {
    expect(validateHistory([user, asks('a', 'b'), answers('a'), user])).toEqual([
      'message 1 (assistant) has tool call b without a tool message before message 3',
    ]);
    expect(validateHistory([user, asks('a')])).toEqual([
      'message 1 (assistant) has tool call a without a tool message before message 2',
    ]);
  });

  it('reports a result answered twice, a result for nothing, and one without an id', () => {
    expect(validateHistory([asks('a'), answers('a'), answers('a')])).toEqual([
      "message 2 (tool) answers 'a' a second time",
    ]);
    expect(validateHistory([user, answers('x')])).toEqual([
      "message 1 (tool) answers 'x', which the assistant message before it did not call",
    ]);
    expect(validateHistory([asks('a'), { role: 'tool', content: 'ok' }, answers('a')])).toEqual([
      'message 1 (tool) has no tool_call_id',
    ]);
  });

  it('reports a result that comes after another message, and duplicate call ids', () => {
    expect(validateHistory([asks('a'), user, answers('a')])).toEqual([
      'message 0 (assistant) has tool call a without a tool message before message 1',
      "message 2 (tool) answers 'a', which the assistant message before it did not call",
    ]);
    expect(validateHistory([asks('a', 'a'), answers('a')])).toEqual([
      "message 0 (assistant) uses tool call id 'a' twice",
    ]);
  });
});
