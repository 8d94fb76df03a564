import { OpenAILanguageModel } from '../../shared/adapters/openai/openai-language-model.js';
import type { StepTiming } from '../lib/step-timings.js';
import { PEER_MODEL, stepRequest, type StepKind } from './peer-steps.js';

/** The step body of a peer: the model call (through agentq's adapter) or nothing, timed. */
export function stepBody(timings: Map<string, StepTiming[]>) {
  const model = new OpenAILanguageModel({
    model: PEER_MODEL,
    baseURL: process.env.OPENAI_BASE_URL!,
    apiKey: 'bench',
  });
  return async (runId: string, index: number, kind: StepKind): Promise<string> => {
    const startedAt = performance.now();
    const answer = kind === 'noop' ? 'ok' : ((await model.generate(stepRequest(runId, index))).message.content ?? '');
    const list = timings.get(runId) ?? [];
    list.push({ superstep: index, startedAt, endedAt: performance.now() });
    timings.set(runId, list);
    return answer;
  };
}
