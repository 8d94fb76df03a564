import { describe, expect, it } from 'vitest';
import type { LanguageModel, LanguageModelRequest } from '../../shared/ports/language-model.js';
import { pacedLanguageModel } from '../../worker/agents/llm/paced-language-model.js';
import { TurnGate } from '../../worker/runtime/turn-gate.js';

/** Model requests start through the turn gate: a burst is spread over event-loop turns. */
describe('pacedLanguageModel', () => {
  it('sends at most perTurn requests per turn, each one once, and answers each caller with its own response', async () => {
    let turn = 0;
    const startedInTurn = new Map<number, number>();
    // Counts event-loop turns the way the gate does: one per setImmediate.
    const tick = () => setImmediate(() => ((turn += 1), turn < 10_000 && tick()));
    tick();
    const model: LanguageModel = {
      provider: 'scripted',
      modelId: 'm',
      generate: async (request: LanguageModelRequest) => {
        startedInTurn.set(turn, (startedInTurn.get(turn) ?? 0) + 1);
        return {
          message: { role: 'assistant', content: String(request.messages[0]?.content) },
          usage: undefined,
          finishReason: 'stop',
          model: 'm',
        };
      },
    };
    const paced = pacedLanguageModel(model, new TurnGate(4));
    expect([paced.provider, paced.modelId]).toEqual(['scripted', 'm']);
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_value, index) =>
        paced.generate({ messages: [{ role: 'user', content: `q${index}` }] }),
      ),
    );
    expect(answers.map((answer) => answer.message.content)).toEqual(
      Array.from({ length: 100 }, (_value, index) => `q${index}`),
    );
    expect([...startedInTurn.values()].reduce((sum, count) => sum + count, 0)).toBe(100);
    expect(Math.max(...startedInTurn.values())).toBeLessThanOrEqual(4);
    expect(startedInTurn.size).toBeGreaterThanOrEqual(25);
  });
});
