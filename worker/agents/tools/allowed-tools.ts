import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { AnyTool } from '../../../shared/ports/define-tool.js';

/**
 * The operator's answer to "may this tenant use this tool?" (`services.allowTool`): asked for every tool
 * before it is offered to a model and again before a call of it runs, under every graph. Pure and quick
 * (it is asked per tool per step); the worker's policy is wired in here, not in the graphs.
 */
export type AllowTool = (tenant: string, tool: string) => boolean;

/** Whether the run's tenant may use `tool`: the one place `services.allowTool` is read (absent: every tool). */
export function toolAllowed(context: Pick<NodeContext, 'services' | 'tenant'>, tool: string): boolean {
  const allow = context.services.allowTool;
  return allow === undefined || allow(context.tenant, tool);
}

/**
 * `tools` without those the tenant may not use. `named`: the run listed them itself, so a disallowed one
 * fails the run (INVALID_INPUT, before any model call) rather than being dropped without a word.
 */
export function allowedTools(
  context: Pick<NodeContext, 'services' | 'tenant'>,
  tools: readonly AnyTool[],
  { named }: { named: boolean },
): AnyTool[] {
  const refused = tools.filter((tool) => !toolAllowed(context, tool.name));
  if (refused.length === 0) return [...tools];
  if (named)
    throw new AgentqError(
      'INVALID_INPUT',
      `tool${refused.length > 1 ? 's' : ''} ${refused.map((tool) => `'${tool.name}'`).join(', ')} ${refused.length > 1 ? 'are' : 'is'} not allowed for tenant '${context.tenant}' on this worker; leave ${refused.length > 1 ? 'them' : 'it'} out of the run's tools`,
      { details: { tools: refused.map((tool) => tool.name), tenant: context.tenant } },
    );
  return tools.filter((tool) => !refused.includes(tool));
}
