import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { AnyTool } from '../../../shared/ports/define-tool.js';
import { toolRegistryOf } from '../agent-services.js';
import { allowedTools } from './allowed-tools.js';

/** What a tool provider is asked with: the run and its input. */
export interface ToolProviderRequest {
  runId: string;
  tenant: string;
  /** The run's input, as its graph's schema parsed it. */
  input: unknown;
}

/**
 * Tools chosen for each run from its input (AiServices' ToolProvider), offered beside the run's fixed
 * tools (the worker's registry, MCP servers' tools included). It is asked at every step that offers or
 * runs tools, so it must answer the same tools for the same input (a tool step may run on another worker
 * than the model step that chose the call). Its name (the function's) is what a failure names.
 */
export type ToolProvider = (request: ToolProviderRequest) => readonly AnyTool[] | Promise<readonly AnyTool[]>;

/**
 * The run's tools: its fixed ones (`names` from the registry; undefined: all of them) followed by what
 * `provider` chooses for its input, less those the operator does not allow the tenant (`services.allowTool`;
 * a name the run lists itself fails it with INVALID_INPUT). `names: []` is no tools at all, the provider's
 * included. A provider that throws, answers something that is not a list of tools, or a tool whose name is
 * taken fails the run with TOOL_ERROR naming the provider (not retried: the same input gives the same
 * answer); nothing else in the worker is touched. Every graph asks here for what it offers and runs.
 */
export async function runToolsOf(
  context: Pick<NodeContext, 'services' | 'runId' | 'tenant' | 'logger'>,
  names: readonly string[] | undefined,
  provider?: ToolProvider,
  input?: unknown,
): Promise<AnyTool[]> {
  if (names?.length === 0) return [];
  const fixed = allowedTools(context, toolRegistryOf(context).select(names), { named: names !== undefined });
  if (!provider) return fixed;
  const label = provider.name ? `tool provider '${provider.name}'` : 'the tool provider';
  let provided: readonly AnyTool[];
  try {
    provided = await provider({ runId: context.runId, tenant: context.tenant, input });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    context.logger.warn({ runId: context.runId, err: message }, 'tool provider failed; the run fails');
    throw new AgentqError('TOOL_ERROR', `${label} failed for this run's input: ${message}`, {
      retryable: AgentqError.isInstance(error) && error.retryable,
      details: { toolProvider: provider.name || null },
      cause: error,
    });
  }
  if (!Array.isArray(provided) || provided.some((tool) => typeof tool?.name !== 'string' || !tool.execute)) {
    throw new AgentqError('TOOL_ERROR', `${label} returned something other than a list of tools (defineTool values)`, {
      details: { toolProvider: provider.name || null },
    });
  }
  const taken = new Set(fixed.map((tool) => tool.name));
  for (const tool of provided) {
    if (taken.has(tool.name))
      throw new AgentqError(
        'TOOL_ERROR',
        `${label} returned tool '${tool.name}', a name the run already has; give it another name`,
        { details: { toolProvider: provider.name || null, tool: tool.name } },
      );
    taken.add(tool.name);
  }
  return [...fixed, ...allowedTools(context, provided, { named: false })];
}
