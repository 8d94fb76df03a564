import type { Message } from '../../../shared/contracts/run-record.js';
import type { GuardrailPlan } from '../../../shared/contracts/guardrail-spec.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { guardrailRegistryOf } from './guardrail-registry-of.js';
import { blocked, runGuardrails } from './run-guardrails.js';

/**
 * The input guardrails of `plan` over a run's question or task, inside the step that first uses it
 * (rag-agent, reflect and multi-agent check in line rather than in a step of their own: a guardrail is
 * one more call in the step the model call follows, and the model's response is memoised, so a retry
 * of that step does not pay for the model twice). Binding both stages here fails a run that names an
 * unknown guardrail before any model call. Returns the text the run continues with (rewritten or not).
 */
export async function guardInput(context: NodeContext, plan: GuardrailPlan, text: string): Promise<string> {
  const bound = guardrailRegistryOf(context).bind(plan);
  if (bound.input.length === 0) return text;
  return (await runGuardrails(context, 'input', bound.input, text)).text;
}

/** What the output guardrails made of an answer: keep it (perhaps rewritten), or ask again. */
type GuardedAnswer =
  { action: 'pass'; text: string } | { action: 'reprompt'; text: string; reprompts: number; rejection: Message };

/**
 * The output guardrails of `plan` over a final answer. A reprompt is allowed while `reprompts` is below
 * `plan.maxReprompts` and `canReprompt` (the agent can ask again); otherwise it blocks the run with
 * GUARDRAIL_BLOCKED, as react-agent's do.
 */
export async function guardAnswer(
  context: NodeContext,
  plan: GuardrailPlan,
  reprompts: number,
  text: string,
  canReprompt = true,
): Promise<GuardedAnswer> {
  const bound = guardrailRegistryOf(context).bind(plan);
  if (bound.output.length === 0) return { action: 'pass', text };
  const verdict = await runGuardrails(context, 'output', bound.output, text);
  if (verdict.action === 'pass') return { action: 'pass', text: verdict.text };
  if (!canReprompt || reprompts >= plan.maxReprompts) {
    const after = canReprompt ? ` (still so after ${reprompts} reprompt${reprompts === 1 ? '' : 's'})` : '';
    throw await blocked(context, 'output', verdict.guardrail, `${verdict.reason}${after}`);
  }
  await context.emit('guardrail-retry', {
    guardrail: verdict.guardrail,
    stage: 'output',
    reason: verdict.reason,
    reprompt: reprompts + 1,
  });
  return {
    action: 'reprompt',
    text: verdict.text,
    reprompts: reprompts + 1,
    rejection: {
      role: 'user',
      content: `Your answer was rejected by the guardrail '${verdict.guardrail}': ${verdict.reason}`,
    },
  };
}
