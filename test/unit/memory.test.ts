import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { contextWindowOf, parseContextWindows } from '../../shared/llm/context-window.js';
import { chooseSummaryCut, latestUserIndex } from '../../worker/agents/memory/choose-summary-cut.js';
import { emptyMemory, type MemoryState } from '../../worker/runtime/memory/memory-state.js';
import { promptView, SUMMARY_HEADING } from '../../worker/runtime/memory/prompt-history.js';
import { shouldSummarize } from '../../worker/agents/memory/summarize-history.js';
import type { Message } from '../../shared/contracts/run-record.js';

/**
 * A valid history (every tool call answered exactly once): a system prompt, then user turns, plain answers and
 * tool-call blocks.
 */
const historyArbitrary = fc
  .array(
    fc.oneof(
      fc.record({ kind: fc.constant('user' as const), size: fc.integer({ min: 1, max: 200 }) }),
      fc.record({ kind: fc.constant('answer' as const), size: fc.integer({ min: 1, max: 200 }) }),
      fc.record({
        kind: fc.constant('tools' as const),
        size: fc.integer({ min: 1, max: 200 }),
        calls: fc.integer({ min: 1, max: 3 }),
      }),
    ),
    { minLength: 1, maxLength: 30 },
  )
  .map((blocks) => {
    const messages: Message[] = [{ role: 'system', content: 'system prompt' }];
    blocks.forEach((block, position) => {
      const text = 'w '.repeat(block.size);
      if (block.kind === 'user') messages.push({ role: 'user', content: text });
      else if (block.kind === 'answer') messages.push({ role: 'assistant', content: text });
      else {
        const ids = Array.from({ length: block.calls }, (_, call) => `call_${position}_${call}`);
        messages.push({
          role: 'assistant',
          content: null,
          tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'calculator', arguments: '{}' } })),
        });
        for (const id of ids) messages.push({ role: 'tool', tool_call_id: id, content: text });
      }
    });
    return messages;
  });

const countTokens = (message: Message) => Math.ceil((message.content ?? '').length / 2) + 4;

describe('memory', () => {
  it('never cuts between an assistant tool call and its results; the prompt view stays valid (I3)', () => {
    fc.assert(
      fc.property(historyArbitrary, fc.integer({ min: 0, max: 2000 }), fc.nat(), (history, keepTokens, seed) => {
        // Start from an earlier summary at a random safe point, or from none.
        const safe = history
          .map((message, index) => (index > 0 && message.role !== 'tool' ? index : -1))
          .filter((index) => index > 0);
        const upTo = seed % 3 === 0 || safe.length === 0 ? 0 : safe[seed % safe.length]!;
        const tail = history.slice(upTo);
        const cut = chooseSummaryCut({ tail, offset: upTo, keepTokens, countTokens });
        if (cut === undefined) {
          // Nothing to fold: at most the system prompt and one block are left.
          return;
        }
        expect(cut).toBeGreaterThan(upTo === 0 ? 1 : upTo);
        expect(history[cut]!.role).not.toBe('tool');
        const userIndex = latestUserIndex(tail, upTo);
        const memory: MemoryState = {
          upTo: cut,
          summary: 'summary',
          system: 'system prompt',
          pinned: userIndex >= 0 && userIndex < cut ? history[userIndex]! : null,
          summarizedAtLength: history.length,
        };
        const view = promptView(memory, history.slice(cut));
        expect(validateHistory(view)).toEqual([]);
        expect(view[0]!.content).toContain(SUMMARY_HEADING);
        // The latest user message is always in the prompt, verbatim.
        if (userIndex >= 0) expect(view).toContain(history[userIndex]);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps as many recent messages as fit, and at least the last block', () => {
    const history: Message[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'u2' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calculator', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'x'.repeat(100) },
    ];
    const tokens = (message: Message) => (message.content ?? '').length;
    // Room for everything after the system prompt but the first two: cut at u2.
    expect(chooseSummaryCut({ tail: history, offset: 0, keepTokens: 102, countTokens: tokens })).toBe(3);
    // No room at all: still keep the last block (the assistant call and its result).
    expect(chooseSummaryCut({ tail: history, offset: 0, keepTokens: 0, countTokens: tokens })).toBe(4);
    // Only the system prompt and one block: nothing to fold.
    expect(
      chooseSummaryCut({ tail: history.slice(0, 2), offset: 0, keepTokens: 0, countTokens: tokens }),
    ).toBeUndefined();
    expect(chooseSummaryCut({ tail: history.slice(4), offset: 4, keepTokens: 0, countTokens: tokens })).toBeUndefined();
  });

  it('summarises above the threshold, once per history length', () => {
    const settings = { contextWindow: 1000, summarizeAt: 0.75 };
    expect(shouldSummarize(emptyMemory(), 10, 750, settings)).toBe(false);
    expect(shouldSummarize(emptyMemory(), 10, 751, settings)).toBe(true);
    expect(shouldSummarize({ ...emptyMemory(), summarizedAtLength: 10 }, 10, 900, settings)).toBe(false);
    expect(shouldSummarize({ ...emptyMemory(), summarizedAtLength: 10 }, 12, 900, settings)).toBe(true);
    expect(shouldSummarize(emptyMemory(), 10, 100_000, { ...settings, summarizeAt: 0 })).toBe(false);
  });

  it('context windows per model, with a default', () => {
    const { table, problems } = parseContextWindows('gpt-4o-mini:128000, llama3.2:3b:131072');
    expect(problems).toEqual([]);
    expect(contextWindowOf(table, 'gpt-4o-mini-2024-07-18', 8192)).toBe(128_000);
    expect(contextWindowOf(table, 'llama3.2:3b', 8192)).toBe(131_072);
    expect(contextWindowOf(table, 'other', 8192)).toBe(8192);
    expect(parseContextWindows('gpt-4o:lots').problems[0]).toMatch(/must be <model>:<context window in tokens/);
  });
});
