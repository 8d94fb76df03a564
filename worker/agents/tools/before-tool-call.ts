import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { AnyTool } from '../../../shared/ports/define-tool.js';
import type { ToolCall } from '../../../shared/ports/language-model.js';

/** What a `beforeToolCall` hook sees: the call, its arguments parsed from JSON, and the tool it names. */
export interface BeforeToolCallRequest {
  call: ToolCall;
  /** The model's arguments, parsed (not yet checked against the tool's schema). */
  arguments: unknown;
  tool: AnyTool;
  runId: string;
  tenant: string;
}

/**
 * A hook's answer: nothing (or `{ action: 'run' }`) runs the call as the model made it; `{ action:
 * 'rewrite', arguments }` runs it with these arguments instead (checked against the tool's schema like the
 * model's); `{ action: 'veto', message }` does not run it, and the model reads `message` as the call's result.
 */
export type BeforeToolCallDecision =
  | undefined
  | void
  | { action: 'run' }
  | { action: 'rewrite'; arguments: unknown }
  | { action: 'veto'; message: string };

/**
 * Called before every tool call a run makes, after the arguments parsed as JSON and before the tool's
 * schema checks them (so a rewrite is checked too). Throw to fail the step: a retryable `AgentqError`
 * retries it, anything else fails the run, as from a node.
 */
export type BeforeToolCall = (
  request: BeforeToolCallRequest,
  context: NodeContext,
) => BeforeToolCallDecision | Promise<BeforeToolCallDecision>;

/** A hook's decision, checked: the veto's message or the arguments to run the call with. */
export async function decideToolCall(
  hook: BeforeToolCall,
  request: BeforeToolCallRequest,
  context: NodeContext,
): Promise<{ veto: string } | { arguments: unknown; rewritten: boolean }> {
  const decision = await hook(request, context);
  if (decision === undefined || decision.action === 'run') return { arguments: request.arguments, rewritten: false };
  if (decision.action === 'veto') {
    if (typeof decision.message !== 'string' || decision.message === '')
      throw new AgentqError(
        'TOOL_ERROR',
        `beforeToolCall vetoed the call of '${request.tool.name}' without a message for the model; give { action: 'veto', message }`,
      );
    return { veto: decision.message };
  }
  if (decision.action === 'rewrite') return { arguments: decision.arguments, rewritten: true };
  throw new AgentqError(
    'TOOL_ERROR',
    `beforeToolCall answered an unknown action '${String((decision as { action?: unknown }).action)}' for '${request.tool.name}'; answer nothing, { action: 'run' }, { action: 'rewrite', arguments } or { action: 'veto', message }`,
  );
}
