import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { DEFAULT_AGENT_SETTINGS } from '../agent-settings.js';
import type { GuardrailResult, GuardrailStage } from './define-guardrail.js';
import type { BoundGuardrail } from './guardrail-registry.js';

/** What a stage's guardrails decided together. */
type GuardrailsVerdict =
  | { action: 'pass'; text: string; rewrittenBy: string[] }
  | { action: 'reprompt'; text: string; guardrail: string; reason: string; rewrittenBy: string[] };

/**
 * Runs a stage's guardrails in order over `text`: a rewrite feeds the next guardrail, the first block
 * throws GUARDRAIL_BLOCKED (details: guardrail, stage, reason), the first reprompt stops the list (an
 * input reprompt blocks: there is no answer to ask again for). Each decision is an event
 * (`guardrail-pass` — also for a rewrite, with `rewritten: true` — or `guardrail-block`). Each check
 * has AGENTQ_GUARDRAIL_TIMEOUT_MS (`checkWithin`).
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
    const result = await checkWithin(context, stage, { guardrail, options }, current);
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

/**
 * One guardrail's check, bounded by AGENTQ_GUARDRAIL_TIMEOUT_MS: a wait (a moderation request, a custom
 * check's promise) is cut at the time, and a synchronous check stops where it calls `checkDeadline()`
 * (the built-ins do between patterns and matches). A check cannot be stopped from outside while it holds
 * the thread; moving checks to a worker thread would not help custom ones (a closure cannot be sent to
 * another thread), and caller-supplied patterns run on RE2, linear in the text, so what remains is
 * bounded by the text's length and the checks' pieces. Fails the step with GUARDRAIL_TIMEOUT, not
 * retried: the same text would take as long again.
 */
async function checkWithin(
  context: NodeContext,
  stage: GuardrailStage,
  { guardrail, options }: BoundGuardrail,
  text: string,
): Promise<GuardrailResult> {
  const timeoutMs = context.services.agentSettings?.guardrailTimeoutMs ?? DEFAULT_AGENT_SETTINGS.guardrailTimeoutMs;
  const deadline = Date.now() + timeoutMs;
  const timedOut = () =>
    new AgentqError(
      'GUARDRAIL_TIMEOUT',
      `guardrail '${guardrail.name}' took longer than AGENTQ_GUARDRAIL_TIMEOUT_MS (${timeoutMs} ms) on the ${stage === 'input' ? 'input' : "model's answer"} (${text.length} characters)`,
      { details: { guardrail: guardrail.name, stage, timeoutMs } },
    );
  const checkDeadline = () => {
    if (Date.now() > deadline) throw timedOut();
  };
  const result = guardrail.check(text, { stage, options, node: context, checkDeadline });
  if (!(result instanceof Promise)) return result;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([result, expired]);
  } finally {
    clearTimeout(timer);
  }
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
