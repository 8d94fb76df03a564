import { contentText, type Message } from '../../shared/contracts/run-record.js';
import type { ScriptedChatRequest, ScriptedResponse } from '../fakes/scripted-openai-server.js';

/** The last message of a scripted chat request. */
export const lastMessage = (request: ScriptedChatRequest) => request.body.messages.at(-1) as Message;

/**
 * A react-agent run's model, for the time-travel tests: one calculator call (`6*7`), then an
 * answer naming the tool's result — 3 steps: model, tool, model.
 */
export function calculatorScript(request: ScriptedChatRequest): ScriptedResponse {
  return lastMessage(request).role === 'user'
    ? { toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }
    : {
        content: `the answer is ${(JSON.parse(contentText(lastMessage(request).content) || '{}') as { result?: number }).result}`,
      };
}
