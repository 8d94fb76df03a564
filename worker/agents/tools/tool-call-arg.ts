import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { ToolCall } from '../../../shared/ports/language-model.js';

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

/**
 * The tool call a step was sent (its `Send` argument: one call of a model response, fanned out to one
 * step each). `step` names the step in the error, e.g. "react-agent: the tool step".
 */
export function toolCallArg(context: Pick<NodeContext, 'arg'>, step: string): ToolCall {
  const parsed = toolCallSchema.safeParse(context.arg);
  if (!parsed.success)
    throw new AgentqError(
      'INTERNAL',
      `${step} got no tool call to run (arg ${JSON.stringify(context.arg)?.slice(0, 200)})`,
    );
  return parsed.data;
}
