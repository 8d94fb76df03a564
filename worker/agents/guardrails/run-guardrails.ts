import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { GuardrailStage } from './define-guardrail.js';
import type { BoundGuardrail } from './guardrail-registry.js';

/** What a stage's guardrails decided together. */
type GuardrailsVerdict =
  | { action: 'pass'; text: string; rewrittenBy: string[] }
  | { action: 'reprompt'; text: string; guardrail: string; reason: string; rewrittenBy: string[] };

/**
 * Runs a stage's guardrails in order over `text`: a rewrite feeds the next guardrail, the first block
 * throws GUARDRAIL_BLOCKED (details: guardrail, stage, reason), the first reprompt stops the list (an
 * input reprompt blocks: there is no answer to ask again for). Each decision is an event
 * (`guardrail-pass` — also for a rewrite, with `rewritten: true` — or `guardrail-block`).
 */
export async function runGuardrails(
  context: NodeContext,
  stage: GuardrailStage,
  guardrails: readonly BoundGuardrail[],
  text: string,
): Promise<GuardrailsVerdict> {
  let current = text;
  const rewrittenBy: string[] = [];
  for (const { guardrail, options } of guardrails) {
    const result = await guardrail.check(current, { stage, options, node: context });
    const name = guardrail.name;
    if (result.action === 'pass' || result.action === 'rewrite') {
      if (result.action === 'rewrite') {
        current = result.text;
        rewrittenBy.push(name);
      }
      await context.emit('guardrail-pass', {
        guardrail: name,
        stage,
        ...(result.action === 'rewrite'
          ? { rewritten: true, ...(result.reason ? { reason: result.reason } : {}) }
          : {}),
      });
      continue;
    }
    if (result.action === 'reprompt' && stage === 'output')
      return { action: 'reprompt', text: current, guardrail: name, reason: result.reason, rewrittenBy };
    throw await blocked(context, stage, name, result.reason);
  }
  return { action: 'pass', text: current, rewrittenBy };
}

/** The run's GUARDRAIL_BLOCKED error, its event emitted first. */
export async function blocked(
  context: NodeContext,
  stage: GuardrailStage,
  guardrail: string,
  reason: string,
): Promise<AgentqError> {
  await context.emit('guardrail-block', { guardrail, stage, reason });
  return new AgentqError(
    'GUARDRAIL_BLOCKED',
    `guardrail '${guardrail}' blocked the ${stage === 'input' ? 'input' : "model's answer"}: ${reason}`,
    {
      details: { guardrail, stage, reason },
    },
  );
}
