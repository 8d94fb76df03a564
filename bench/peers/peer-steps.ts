/**
 * What every system's run does, so the figures compare the same work: STEPS durable steps in a row,
 * each either a no-op (returns a constant) or one chat request through agentq's own openai-SDK adapter
 * to the scripted model. The prompt names the run and the step, so the model server's log tells which
 * (run, step) a call belongs to (the "asked again after the answer arrived" count). The peers' step
 * body is peer-step-body.ts (agentq's worker loads this file only, not the adapter's source).
 */
import type { LanguageModelRequest } from '../../shared/ports/language-model.js';

export const STEPS = 10;
export type StepKind = 'noop' | 'model';
export const PEER_MODEL = 'scripted-chat';

export function stepRequest(runId: string, index: number): Omit<LanguageModelRequest, 'abortSignal'> {
  return {
    messages: [{ role: 'user', content: `Run ${runId} step ${index + 1} of ${STEPS}: answer with one word.` }],
    maxTokens: 16,
  };
}

/** `(run, step)` of a prompt made by `stepRequest`, or undefined. */
export function stepOfPrompt(prompt: string): string | undefined {
  return /Run (\S+) step (\d+) of/.exec(prompt)?.slice(1, 3).join(' ');
}

/** The text of a chat request's messages, for `stepOfPrompt`. */
export function promptOf(body: { messages?: readonly { content?: unknown }[] }): string {
  return (body.messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : '')).join(' ');
}
