import type { LanguageModel } from '../../../shared/ports/language-model.js';
import type { TurnGate } from '../../runtime/turn-gate.js';

/**
 * A language model whose requests start through the process's turn gate. Building a request
 * in the openai SDK and undici costs about half a millisecond of synchronous work; when thousands of
 * steps reach their model call together — a burst of Redis replies (claims, budget reservations) resumes
 * them all in one drain of the microtask queue — those requests were built back to back and held the
 * event loop for seconds. Gated right before the SDK call, at most AGENTQ_STEP_STARTS_PER_TURN start
 * per turn, with timers and I/O between turns; the total work is the same.
 */
export function pacedLanguageModel(model: LanguageModel, gate: TurnGate): LanguageModel {
  return {
    provider: model.provider,
    modelId: model.modelId,
    generate: (request) => gate.through(() => model.generate(request)),
  };
}
