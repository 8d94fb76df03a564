import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { messageWindow } from '../../worker/agents/memory/message-window.js';
import type { Message } from '../../shared/contracts/run-record.js';

const system: Message = { role: 'system', content: 'be brief' };
const user = (content: string): Message => ({ role: 'user', content });
const assistant = (content: string): Message => ({ role: 'assistant', content });
const call: Message = {
  role: 'assistant',
  content: null,
  tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calculator', arguments: '{}' } }],
};
const result: Message = { role: 'tool', tool_call_id: 'c1', content: '2' };

describe('messageWindow', () => {
  it('keeps the system prompt and the last N messages', () => {
    const history = [system, user('a'), assistant('A'), user('b'), assistant('B')];
    expect(messageWindow(history, 2)).toEqual([system, user('b'), assistant('B')]);
    expect(messageWindow(history, 10)).toEqual(history);
  });

  it('never starts at a tool result, and pins the latest user message', () => {
    const history = [system, user('a'), assistant('A'), user('add'), call, result];
    const window = messageWindow(history, 1);
    expect(window).toEqual([system, user('add'), call, result]);
    expect(validateHistory(window)).toEqual([]);
  });
});
