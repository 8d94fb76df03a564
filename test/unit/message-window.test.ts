import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { messageWindow, requestWindow } from '../../worker/agents/memory/message-window.js';
import { closeTurn, openTurn } from '../../worker/agents/memory/conversation-turn.js';
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

describe('requestWindow (reflect, multi-agent)', () => {
  it("keeps the run's request in view: earlier turns and later messages each windowed around it", () => {
    // A conversation's second turn: turn 1, then the task, two drafts and a critique.
    const history = [system, user('t1'), assistant('d1'), user('t2'), assistant('x'), user('fix it'), assistant('y')];
    // After the request, as messageWindow: the latest critique pinned when it falls outside.
    expect(requestWindow(history, { request: 't2', added: [], size: 1 })).toEqual([
      system,
      user('t2'),
      user('fix it'),
      assistant('y'),
    ]);
    expect(requestWindow(history, { request: 't2', added: [], size: 2 })).toEqual([
      system,
      assistant('d1'),
      user('t2'),
      user('fix it'),
      assistant('y'),
    ]);
  });

  it('while the turn opens, the earlier turns are windowed and the request follows them', () => {
    const history = [system, user('t1'), assistant('d1'), user('fix it'), assistant('d2')];
    const added = [user('t2')];
    expect(requestWindow(history, { request: 't2', added, size: 1 })).toEqual([
      system,
      user('fix it'),
      assistant('d2'),
      user('t2'),
    ]);
    // A first turn: nothing before, the request alone after the system prompt.
    expect(requestWindow([], { request: 't1', added: [system, user('t1')], size: 3 })).toEqual([system, user('t1')]);
  });
});

describe('openTurn and closeTurn', () => {
  it("opens a run's turn once: the system prompt only on an empty history, the question after earlier turns", () => {
    const question = user('q2');
    expect(openTurn({ turnStarted: false, historyLength: 0, system: 'be brief', question })).toEqual([
      system,
      question,
    ]);
    expect(openTurn({ turnStarted: false, historyLength: 2, system: 'be brief', question })).toEqual([question]);
    expect(openTurn({ turnStarted: true, historyLength: 4, system: 'be brief', question })).toEqual([]);
    // A run from before the key: an empty history is a turn still to open, a longer one an open turn.
    expect(openTurn({ turnStarted: null, historyLength: 0, system: null, question })).toEqual([question]);
    expect(openTurn({ turnStarted: null, historyLength: 3, system: null, question })).toEqual([]);
  });

  it('closes a turn with the answer as text unless the model already answered in text', () => {
    expect(closeTurn([user('q'), call, result], '42')).toEqual([user('q'), call, result, assistant('42')]);
    expect(closeTurn([user('q'), assistant('It is 42.')], '42')).toEqual([user('q'), assistant('It is 42.')]);
    expect(closeTurn([], '42')).toEqual([assistant('42')]);
  });
});
