import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { AnyTool, ToolCallDecision } from '../../../shared/ports/define-tool.js';
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

/** A hook's answer (the tool's own hook answers the same). */
export type BeforeToolCallDecision = ToolCallDecision;

/**
 * Called before every tool call a run makes, after the arguments parsed as JSON and before the tool's
 * schema checks them (so a rewrite is checked too). Throw to fail the step: a retryable `AgentqError`
 * retries it, anything else fails the run, as from a node.
 */
export type BeforeToolCall = (
  request: BeforeToolCallRequest,
  context: NodeContext,
) => BeforeToolCallDecision | Promise<BeforeToolCallDecision>;

/**
 * A hook's decision, checked: the veto's message or the arguments to run the call with. `hook` says
 * whose it is in an error (`beforeToolCall`, `the tool's own beforeToolCall`).
 */
export async function decideToolCall(
  decide: () => BeforeToolCallDecision | Promise<BeforeToolCallDecision>,
  request: { arguments: unknown; tool: AnyTool },
  hook = 'beforeToolCall',
): Promise<{ veto: string } | { arguments: unknown; rewritten: boolean }> {
  const decision = await decide();
  if (decision === undefined || decision.action === 'run') return { arguments: request.arguments, rewritten: false };
  if (decision.action === 'veto') {
    if (typeof decision.message !== 'string' || decision.message === '')
      throw new AgentqError(
        'TOOL_ERROR',
        `${hook} vetoed the call of '${request.tool.name}' without a message for the model; give { action: 'veto', message }`,
      );
    return { veto: decision.message };
  }
  if (decision.action === 'rewrite') return { arguments: decision.arguments, rewritten: true };
  throw new AgentqError(
    'TOOL_ERROR',
    `${hook} answered an unknown action '${String((decision as { action?: unknown }).action)}' for '${request.tool.name}'; answer nothing, { action: 'run' }, { action: 'rewrite', arguments } or { action: 'veto', message }`,
  );
}
