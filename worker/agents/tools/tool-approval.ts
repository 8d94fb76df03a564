import { z } from 'zod';
import type { ToolCall } from '../../../shared/ports/language-model.js';

/** What a run waiting on a tool approval shows in its `interrupt.request`. */
export function toolApprovalRequest(call: ToolCall) {
  return {
    type: 'tool-approval',
    tool: call.function.name,
    toolCallId: call.id,
    arguments: call.function.arguments,
    answer: '{ "approved": true } or { "approved": false, "reason": "…" }',
  };
}

const answerSchema = z.object({ approved: z.boolean(), reason: z.string().max(2000).optional() });

/**
 * A person's answer to a tool approval. Anything but `{ approved: true }` is a rejection (an answer in
 * the wrong shape included, saying so): a tool that asked for approval never runs on a guess.
 */
export function approvalOf(answer: unknown): { approved: true } | { approved: false; message: string } {
  const parsed = answerSchema.safeParse(answer);
  if (parsed.success && parsed.data.approved) return { approved: true };
  const why = parsed.success
    ? parsed.data.reason
      ? `: ${parsed.data.reason}`
      : ''
    : ' (the answer was not { "approved": true })';
  return {
    approved: false,
    message: `Error: a person rejected this tool call${why}. Do not call it again with the same arguments; answer without it or ask the user.`,
  };
}
