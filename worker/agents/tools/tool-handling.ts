import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { ToolCall } from '../../../shared/ports/language-model.js';
import type { AnyTool } from '../../../shared/ports/define-tool.js';

/** The model called a tool the run does not offer. */
export interface UnknownToolProblem {
  call: ToolCall;
  /** Names of the tools the run offers. */
  available: string[];
}

/** The model's arguments are not JSON, or fail the tool's schema. */
export interface ToolArgumentsProblem {
  call: ToolCall;
  tool: AnyTool;
  /** What was wrong (the JSON parser's message, or zod's prettified issues). */
  detail: string;
  /** `invalid_json` or `schema`. */
  kind: 'invalid_json' | 'schema';
}

/** The tool threw. */
export interface ToolErrorProblem {
  call: ToolCall;
  tool: AnyTool;
  error: unknown;
  /** This tool step's attempt (1-based) and how many it has. */
  attempt: number;
  maxAttempts: number;
}

/**
 * A handler returns the content of the call's tool message (the run goes on, the model reads it), or
 * throws to end the attempt: a retryable `AgentqError` retries the step, anything else fails the run.
 */
export type ToolProblemHandler<Problem> = (problem: Problem, context: NodeContext) => string | Promise<string>;

/**
 * How a run handles tool calls that go wrong. A graph declares functions or policy names; a run may
 * override each with a policy name (JSON travels in the run's input).
 */
export interface ToolHandling {
  /** @default 'tell': the model is told the tool does not exist, with the list of tools it has */
  onUnknownTool?: UnknownToolPolicy | ToolProblemHandler<UnknownToolProblem>;
  /** @default 'tell': the model is told what was wrong, with the tool's JSON Schema */
  onToolArgumentsError?: ToolArgumentsPolicy | ToolProblemHandler<ToolArgumentsProblem>;
  /** @default 'retry-then-tell': a retryable error retries the step; the last attempt, or any other error, tells the model */
  onToolError?: ToolErrorPolicy | ToolProblemHandler<ToolErrorProblem>;
}

const unknownToolPolicySchema = z.enum(['tell', 'fail']);
const toolArgumentsPolicySchema = z.enum(['tell', 'fail']);
const toolErrorPolicySchema = z.enum(['retry-then-tell', 'tell', 'retry-then-fail', 'fail']);
type UnknownToolPolicy = z.infer<typeof unknownToolPolicySchema>;
type ToolArgumentsPolicy = z.infer<typeof toolArgumentsPolicySchema>;
type ToolErrorPolicy = z.infer<typeof toolErrorPolicySchema>;

/** The per-run override, as it travels in a run's input. */
export const toolHandlingInputSchema = z
  .object({
    onUnknownTool: unknownToolPolicySchema.optional(),
    onToolArgumentsError: toolArgumentsPolicySchema.optional(),
    onToolError: toolErrorPolicySchema.optional(),
  })
  .strict();
type ToolHandlingInput = z.infer<typeof toolHandlingInputSchema>;

/** The graph's handling with the run's overrides on top, every handler a function. */
export interface ResolvedToolHandling {
  onUnknownTool: ToolProblemHandler<UnknownToolProblem>;
  onToolArgumentsError: ToolProblemHandler<ToolArgumentsProblem>;
  onToolError: ToolProblemHandler<ToolErrorProblem>;
}

export function resolveToolHandling(graph: ToolHandling = {}, run: ToolHandlingInput = {}): ResolvedToolHandling {
  return {
    onUnknownTool: handlerOf(run.onUnknownTool ?? graph.onUnknownTool ?? 'tell', unknownToolPolicies),
    onToolArgumentsError: handlerOf(
      run.onToolArgumentsError ?? graph.onToolArgumentsError ?? 'tell',
      toolArgumentsPolicies,
    ),
    onToolError: handlerOf(run.onToolError ?? graph.onToolError ?? 'retry-then-tell', toolErrorPolicies),
  };
}

function handlerOf<Problem, Policy extends string>(
  value: Policy | ToolProblemHandler<Problem>,
  policies: Record<Policy, ToolProblemHandler<Problem>>,
): ToolProblemHandler<Problem> {
  return typeof value === 'function' ? value : policies[value];
}

const tellUnknown: ToolProblemHandler<UnknownToolProblem> = ({ call, available }) =>
  `Error: there is no tool named '${call.function.name}'. Available tools: ${available.join(', ') || 'none'}. Call one of these, or answer without tools.`;

const unknownToolPolicies: Record<UnknownToolPolicy, ToolProblemHandler<UnknownToolProblem>> = {
  tell: tellUnknown,
  fail: ({ call, available }) => {
    throw new AgentqError(
      'TOOL_ERROR',
      `the model called an unknown tool '${call.function.name}' (this run offers: ${available.join(', ') || 'none'}) and the run's onUnknownTool is 'fail'`,
    );
  },
};

const tellArguments: ToolProblemHandler<ToolArgumentsProblem> = ({ call, tool, detail, kind }) =>
  kind === 'invalid_json'
    ? `Error: the arguments of tool '${call.function.name}' are not valid JSON (${detail}). Send a JSON object matching its parameters: ${JSON.stringify(tool.parameters)}`
    : `Error: invalid arguments for tool '${call.function.name}':\n${detail}\nIts parameters: ${JSON.stringify(tool.parameters)}`;

const toolArgumentsPolicies: Record<ToolArgumentsPolicy, ToolProblemHandler<ToolArgumentsProblem>> = {
  tell: tellArguments,
  fail: ({ call, detail }) => {
    throw new AgentqError(
      'TOOL_ERROR',
      `the model sent invalid arguments for tool '${call.function.name}' (${detail}) and the run's onToolArgumentsError is 'fail'`,
    );
  },
};

const retryable = ({ error, attempt, maxAttempts }: ToolErrorProblem) =>
  AgentqError.isInstance(error) && error.retryable && attempt < maxAttempts;
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
const tellError: ToolProblemHandler<ToolErrorProblem> = ({ call, error }) =>
  `Error: tool '${call.function.name}' failed: ${messageOf(error)}`;
const failError = ({ call, error }: ToolErrorProblem): never => {
  throw new AgentqError(
    'TOOL_ERROR',
    `tool '${call.function.name}' failed: ${messageOf(error)} (the run's onToolError fails the run)`,
    { cause: error },
  );
};

const toolErrorPolicies: Record<ToolErrorPolicy, ToolProblemHandler<ToolErrorProblem>> = {
  'retry-then-tell': (problem, context) => {
    if (retryable(problem)) throw problem.error;
    return tellError(problem, context);
  },
  tell: tellError,
  'retry-then-fail': (problem) => {
    if (retryable(problem)) throw problem.error;
    return failError(problem);
  },
  fail: failError,
};
