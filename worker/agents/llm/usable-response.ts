import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { LanguageModelResponse } from '../../../shared/ports/language-model.js';

/** Answers without usable output that a run may take as its answer instead of failing the step. */
const ACCEPTABLE_OUTCOMES = ['empty', 'length', 'content_filter', 'refusal'] as const;
export type AcceptableOutcome = (typeof ACCEPTABLE_OUTCOMES)[number];

/** A run's `accept` option (react-agent, reflect, multi-agent). */
export const acceptOptionSchema = z
  .array(
    z.enum(ACCEPTABLE_OUTCOMES, {
      error: `accept takes ${ACCEPTABLE_OUTCOMES.map((outcome) => `"${outcome}"`).join(', ')}`,
    }),
  )
  .max(ACCEPTABLE_OUTCOMES.length);

/**
 * The response as a run may use it, or the error that fails the step. A response is usable when it has
 * text or a (function) tool call and no refusal. Otherwise, unless `accept` names the case:
 * - a tool call of another type (`custom`): UNSUPPORTED_TOOL_CALL, never accepted (agentq cannot run it);
 * - a refusal: MODEL_REFUSED with the refusal text (accepted: the refusal text becomes the answer);
 * - `finish_reason` content_filter: CONTENT_FILTERED; length: OUTPUT_TRUNCATED;
 * - nothing at all: EMPTY_RESPONSE, retryable (accepted: an empty answer).
 */
export function usableResponse<T extends LanguageModelResponse>(
  response: T,
  accept: readonly AcceptableOutcome[] = [],
): T {
  const model = `model '${response.model}'`;
  const unsupported = response.unsupportedToolCalls ?? [];
  if (unsupported.length > 0)
    throw new AgentqError(
      'UNSUPPORTED_TOOL_CALL',
      `the ${model} made a tool call agentq cannot run: ${unsupported.map((call) => `a '${call.type}' call of tool '${call.name}'`).join(', ')}; only function tool calls run (offer the tool as a function)`,
      { details: { toolCalls: unsupported } },
    );
  const { message, refusal } = response;
  if (refusal !== undefined) {
    if (!accept.includes('refusal'))
      throw new AgentqError('MODEL_REFUSED', `the ${model} refused: ${refusal}`, { details: { refusal } });
    if (!hasText(message.content)) return { ...response, message: { ...message, content: refusal } };
    return response;
  }
  if (hasText(message.content) || (message.tool_calls?.length ?? 0) > 0) return response;
  const details = {
    finishReason: response.finishReason,
    ...(response.responseId ? { responseId: response.responseId } : {}),
  };
  if (response.finishReason === 'content_filter') {
    if (accept.includes('content_filter')) return response;
    throw new AgentqError(
      'CONTENT_FILTERED',
      `the provider's content filter stopped the ${model} before it answered anything (finish_reason content_filter)`,
      { details },
    );
  }
  if (response.finishReason === 'length') {
    if (accept.includes('length')) return response;
    throw new AgentqError(
      'OUTPUT_TRUNCATED',
      `the ${model} reached its token limit before it answered anything (finish_reason length); raise the run's maxOutputTokens or AGENTQ_LLM_MAX_TOKENS`,
      { details },
    );
  }
  if (accept.includes('empty')) return response;
  throw new AgentqError(
    'EMPTY_RESPONSE',
    `the ${model} answered with no text, no tool call and no refusal (finish_reason ${response.finishReason})`,
    { retryable: true, details },
  );
}

function hasText(content: string | null): boolean {
  return content !== null && content.trim() !== '';
}
