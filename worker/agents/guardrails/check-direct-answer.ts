import type { Message } from '../../../shared/contracts/run-record.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { GuardrailPlan } from '../../../shared/contracts/guardrail-spec.js';
import { blocked, runGuardrails } from './run-guardrails.js';

/**
 * The output guardrails over a returnDirect tool's result: a rewrite (redaction) becomes the answer; a
 * reprompt cannot ask the tool again, so it sends the model back with the rejection (the tool message
 * stays in the history, which stays valid), within the same maxReprompts as a model answer.
 */
export async function checkDirectAnswer(
  context: NodeContext,
  state: { reprompts: number; guardrails: GuardrailPlan },
  guardrails: Parameters<typeof runGuardrails>[2],
  answer: string,
): Promise<{ directAnswer: string | null; messages?: Message[]; reprompts?: number; reprompting?: boolean }> {
  const verdict = await runGuardrails(context, 'output', guardrails, answer);
  if (verdict.action === 'pass') return { directAnswer: verdict.text };
  if (state.reprompts >= state.guardrails.maxReprompts) {
    throw await blocked(
      context,
      'output',
      verdict.guardrail,
      `${verdict.reason} (a returnDirect tool's result; still so after ${state.reprompts} reprompt${state.reprompts === 1 ? '' : 's'})`,
    );
  }
  await context.emit('guardrail-retry', {
    guardrail: verdict.guardrail,
    stage: 'output',
    reason: verdict.reason,
    reprompt: state.reprompts + 1,
  });
  return {
    directAnswer: null,
    messages: [
      {
        role: 'user',
        content: `The tool's result was rejected as the answer by the guardrail '${verdict.guardrail}': ${verdict.reason}`,
      },
    ],
    reprompts: state.reprompts + 1,
    reprompting: true,
  };
}
