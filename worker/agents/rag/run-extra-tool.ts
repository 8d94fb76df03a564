import type { NodeContext } from '../../../shared/graph/node-context.js';
import { runToolsOf } from '../tools/tool-provider.js';
import { runToolCall } from '../tools/run-tool-call.js';
import type { RagUpdate } from './rag-state.js';
import type { ResolvedToolHandling } from '../tools/tool-handling.js';

export { TOOL_MAX_ATTEMPTS } from '../tools/run-tool-call.js';

/**
 * One call of a rag-agent run's extra tool (its `tools`), through the one tool path react-agent's calls take
 * (allow-list, approval, the tools' hooks, the memoised outcome), answered with one tool message (so the
 * history stays valid).
 */
export async function runExtraTool(
  extraTools: readonly string[],
  context: NodeContext,
  handling: ResolvedToolHandling,
): Promise<RagUpdate> {
  const { call, message, outcome } = await runToolCall(context, {
    tools: await runToolsOf(context, extraTools),
    handling,
  });
  return {
    messages: [message],
    reasoning: [`${call.function.name} answered${outcome.failure ? ` (${outcome.failure})` : ''}`],
  };
}
