import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { AnyTool } from '../../../shared/ports/define-tool.js';
import type { ToolCall } from '../../../shared/ports/language-model.js';
import { agentSettingsOf } from '../agent-services.js';
import { approvalOf, toolApprovalRequest } from './tool-approval.js';
import type { BeforeToolCall } from './before-tool-call.js';
import { executeToolCallOutcome, type ToolCallOutcome } from './execute-tool-call.js';
import { toolAllowed } from './allowed-tools.js';
import { toolCallArg } from './tool-call-arg.js';
import { toolCallRequest } from './tool-call-request.js';
import { resolveToolHandling, type ResolvedToolHandling } from './tool-handling.js';

/** Attempts of one tool step; a tool's retryable error is retried until the last one, then the model is told. */
export const TOOL_MAX_ATTEMPTS = 3;

/** How `runToolCall` runs a call: the run's tools and what the graph adds. */
export interface RunToolCallOptions {
  /** The tools this run may use: what its model was offered (`runToolsOf`). */
  tools: readonly AnyTool[];
  /** The call to run. @default the step's `Send` argument (one call of a model response per step) */
  call?: ToolCall;
  /** What an unknown tool, bad arguments or a failing tool become. @default tell the model; retry a retryable error first */
  handling?: ResolvedToolHandling;
  /** The graph's hook; the tool's own `beforeToolCall` runs after it either way. @default none */
  beforeToolCall?: BeforeToolCall;
  /** Attempts of this tool step (the node's retry policy's `maxAttempts`). @default TOOL_MAX_ATTEMPTS */
  maxAttempts?: number;
}

/** What a tool step adds: the call's tool message, how it went, and the tool it named (if the run has it). */
export interface ToolStepResult {
  call: ToolCall;
  message: { role: 'tool'; tool_call_id: string; content: string };
  outcome: ToolCallOutcome;
  tool: AnyTool | undefined;
  /** A `returnDirect` tool succeeded: its result is the run's answer. */
  direct: boolean;
}

/**
 * Runs one tool call of a model response as a step, the one way every agent runs tools: a tool the
 * operator does not allow the tenant (`services.allowTool`) is not run and the model is told; a tool with
 * `requiresApproval` parks the run (`waiting`, a `tool-approval` interrupt) until a person answers, and a
 * rejection reaches the model instead; the graph's `beforeToolCall`, then the tool's own, may veto or
 * rewrite the call; its outcome is memoised (a re-delivered step does not call the tool again) and the
 * step's `tool-call` and `tool-result` events are emitted. One call per step: a step answers one interrupt.
 */
export async function runToolCall(context: NodeContext, options: RunToolCallOptions): Promise<ToolStepResult> {
  const call = options.call ?? toolCallArg(context, `${context.node}: the tool step`);
  const name = call.function.name;
  const allowed = toolAllowed(context, name);
  const tool = allowed ? options.tools.find((candidate) => candidate.name === name) : undefined;
  // Asked before anything runs: until a person answers, this throws and the run waits.
  const approval = tool?.requiresApproval ? approvalOf(context.interrupt(toolApprovalRequest(call))) : undefined;
  await context.emit('tool-call', {
    toolCallId: call.id,
    tool: name,
    ...(approval ? { approved: approval.approved } : {}),
  });
  const settings = agentSettingsOf(context);
  // Saved once done: a re-delivered step does not repeat the call (tools also get an idempotency key).
  const outcome = await context.memo<ToolCallOutcome>(
    'tool-outcome',
    async () =>
      !allowed
        ? { content: notAllowed(name), failure: 'not_allowed' }
        : approval && !approval.approved
          ? { content: approval.message, failure: 'rejected' }
          : executeToolCallOutcome(call, context, {
              tools: options.tools.filter((candidate) => toolAllowed(context, candidate.name)),
              maxResultChars: settings.maxToolResultChars,
              traceContent: settings.traceContent,
              maxAttempts: options.maxAttempts ?? TOOL_MAX_ATTEMPTS,
              handling: options.handling ?? resolveToolHandling(),
              ...(options.beforeToolCall ? { beforeToolCall: options.beforeToolCall } : {}),
            }),
    { request: toolCallRequest(call) },
  );
  await context.emit('tool-result', {
    toolCallId: call.id,
    tool: name,
    chars: outcome.content.length,
    ...(outcome.failure === 'vetoed' ? { vetoed: true } : {}),
    ...(outcome.failure === 'not_allowed' ? { notAllowed: true } : {}),
    ...(outcome.rewrittenArguments === undefined ? {} : { rewritten: true }),
  });
  return {
    call,
    message: { role: 'tool', tool_call_id: call.id, content: outcome.content },
    outcome,
    tool,
    direct: tool?.returnDirect === true && outcome.failure === undefined,
  };
}

const notAllowed = (name: string) =>
  `Error: tool '${name}' is not allowed for this run. Answer without it, or tell the user it is not available.`;
