import type { NodeContext } from '../../../shared/graph/node-context.js';
import { agentSettingsOf, toolRegistryOf } from '../agent-services.js';
import { toolCallArg } from '../tools/tool-call-arg.js';
import { toolCallRequest } from '../tools/tool-call-request.js';
import { executeToolCallOutcome, type ToolCallOutcome } from '../tools/execute-tool-call.js';
import type { RagUpdate } from './rag-state.js';
import type { ResolvedToolHandling } from '../tools/tool-handling.js';

/** Attempts of one extra-tool step; a tool's retryable error is retried until the last one, then the model is told. */
export const TOOL_MAX_ATTEMPTS = 3;

/**
 * One call of a rag-agent run's extra tool (its `tools`): run once (the outcome is memoised, so a
 * re-delivered step does not call the tool again) and answered with one tool message (so the history stays valid).
 */
export async function runExtraTool(
  extraTools: readonly string[],
  context: NodeContext,
  handling: ResolvedToolHandling,
): Promise<RagUpdate> {
  const call = toolCallArg(context, 'rag-agent: the tool step');
  const settings = agentSettingsOf(context);
  const tools = toolRegistryOf(context).select(extraTools);
  await context.emit('tool-call', { toolCallId: call.id, tool: call.function.name });
  const outcome = await context.memo<ToolCallOutcome>(
    'tool-outcome',
    () =>
      executeToolCallOutcome(call, context, {
        tools,
        handling,
        maxResultChars: settings.maxToolResultChars,
        traceContent: settings.traceContent,
        maxAttempts: TOOL_MAX_ATTEMPTS,
      }),
    { request: toolCallRequest(call) },
  );
  await context.emit('tool-result', { toolCallId: call.id, tool: call.function.name, chars: outcome.content.length });
  return {
    messages: [{ role: 'tool', tool_call_id: call.id, content: outcome.content }],
    reasoning: [`${call.function.name} answered${outcome.failure ? ` (${outcome.failure})` : ''}`],
  };
}
