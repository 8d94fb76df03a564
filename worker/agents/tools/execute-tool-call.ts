import { SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { ToolCall } from '../../../shared/ports/language-model.js';
import type { AnyTool, ToolExecutionContext } from '../../../shared/ports/define-tool.js';
import { resolveToolHandling, type ResolvedToolHandling } from './tool-handling.js';
import { decideToolCall, type BeforeToolCall } from './before-tool-call.js';

interface ExecuteToolCallOptions {
  /** The tools this run may use (what the model was offered). */
  tools: readonly AnyTool[];
  /** A longer result is cut, with a marker saying so. */
  maxResultChars: number;
  /** Record arguments and results in the span. */
  traceContent: boolean;
  /**
   * Attempts of the tool step in all: a tool's retryable `AgentqError` is rethrown (so the step is
   * retried) until the last attempt, when the model is told instead.
   */
  maxAttempts: number;
  /** What an unknown tool, bad arguments or a failing tool become. @default resolveToolHandling() (tell the model; retry a retryable error first) */
  handling?: ResolvedToolHandling;
  /** Sees each call's arguments before the tool runs, and may veto or rewrite the call. @default none */
  beforeToolCall?: BeforeToolCall;
}

/**
 * Runs one tool call and returns the content of its tool message. Whatever goes wrong with the call
 * itself — an unknown tool, arguments that are not JSON or fail the tool's schema, a tool that throws —
 * becomes that content, telling the model what happened and what to do, so the run goes on (and the
 * history keeps one tool message per call, so it stays valid). Only the step's own abort, and a tool's
 * retryable error while attempts remain, are thrown.
 */
export async function executeToolCall(
  call: ToolCall,
  context: NodeContext,
  options: ExecuteToolCallOptions,
): Promise<string> {
  return (await executeToolCallOutcome(call, context, options)).content;
}

/** A tool call's message content, and why it failed if it did (a `returnDirect` tool ends the run only on success). */
export interface ToolCallOutcome {
  content: string;
  /** `unknown_tool`, `invalid_arguments`, `vetoed`, or the tool's error code; absent on success. */
  failure?: string;
  /** The arguments the tool ran with, when beforeToolCall rewrote the model's. */
  rewrittenArguments?: unknown;
}

/** `executeToolCall`, also saying whether the call failed. */
export async function executeToolCallOutcome(
  call: ToolCall,
  context: NodeContext,
  options: ExecuteToolCallOptions,
): Promise<ToolCallOutcome> {
  const name = call.function.name;
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': name,
    'gen_ai.tool.call.id': call.id,
    'gen_ai.tool.type': 'function',
  };
  if (options.traceContent) attributes['gen_ai.tool.call.arguments'] = call.function.arguments;
  return trace
    .getTracer('agentq')
    .startActiveSpan(`execute_tool ${name}`, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
      try {
        const outcome = await run(call, context, options);
        if (outcome.failure) {
          span.setAttribute('error.type', outcome.failure);
          span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.content });
        }
        const content = truncate(outcome.content, options.maxResultChars);
        if (options.traceContent) span.setAttribute('gen_ai.tool.call.result', content);
        return { ...outcome, content };
      } catch (error) {
        span.recordException(error as Error);
        span.setAttribute('error.type', AgentqError.isInstance(error) ? error.code : (error as Error).name);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    });
}

async function run(call: ToolCall, context: NodeContext, options: ExecuteToolCallOptions): Promise<ToolCallOutcome> {
  const name = call.function.name;
  const handling = options.handling ?? resolveToolHandling();
  const tool = options.tools.find((candidate) => candidate.name === name);
  if (!tool) {
    return {
      failure: 'unknown_tool',
      content: await handling.onUnknownTool(
        { call, available: options.tools.map((candidate) => candidate.name) },
        context,
      ),
    };
  }
  let raw: unknown;
  try {
    // Some servers send '' for a call without arguments.
    raw = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch (error) {
    return {
      failure: 'invalid_arguments',
      content: await handling.onToolArgumentsError(
        { call, tool, kind: 'invalid_json', detail: (error as Error).message },
        context,
      ),
    };
  }
  const execution = {
    runId: context.runId,
    tenant: context.tenant,
    toolCallId: call.id,
    idempotencyKey: `${context.runId}:${context.stepId}:${call.id}`,
    attempt: context.attempt,
    abortSignal: context.abortSignal,
    logger: context.logger,
  };
  let rewritten: { rewrittenArguments: unknown } | undefined;
  // The graph's hook first, then the tool's own on what the graph's leaves: a graph cannot skip the tool's.
  const hooks = [
    ...(options.beforeToolCall
      ? [{ hook: 'beforeToolCall', decide: graphHook(options.beforeToolCall, call, tool, context) }]
      : []),
    ...(tool.beforeToolCall
      ? [{ hook: `the beforeToolCall of tool '${tool.name}'`, decide: toolHook(tool, call, execution) }]
      : []),
  ];
  for (const { hook, decide } of hooks) {
    const decision = await decideToolCall(() => decide(raw), { arguments: raw, tool }, hook);
    if ('veto' in decision) return { failure: 'vetoed', content: decision.veto };
    raw = decision.arguments;
    if (decision.rewritten) rewritten = { rewrittenArguments: raw };
  }
  const parsed = tool.input.safeParse(raw);
  if (!parsed.success) {
    return {
      failure: 'invalid_arguments',
      content: await handling.onToolArgumentsError(
        { call, tool, kind: 'schema', detail: z.prettifyError(parsed.error) },
        context,
      ),
    };
  }
  try {
    const result: unknown = await tool.execute(parsed.data, execution);
    return { content: stringify(result), ...rewritten };
  } catch (error) {
    // The step's own abort (cancel, timeout, shutdown) is the step's business, not the model's.
    if (context.abortSignal.aborted)
      throw context.abortSignal.reason instanceof Error ? context.abortSignal.reason : error;
    const content = await handling.onToolError(
      { call, tool, error, attempt: context.attempt, maxAttempts: options.maxAttempts },
      context,
    );
    context.logger.info(
      { tool: name, toolCallId: call.id, err: error instanceof Error ? error.message : String(error) },
      'tool failed; the model is told',
    );
    return { failure: AgentqError.isInstance(error) ? error.code : 'tool_error', content, ...rewritten };
  }
}

const graphHook = (hook: BeforeToolCall, call: ToolCall, tool: AnyTool, context: NodeContext) => (args: unknown) =>
  hook({ call, arguments: args, tool, runId: context.runId, tenant: context.tenant }, context);

const toolHook = (tool: AnyTool, call: ToolCall, execution: ToolExecutionContext) => (args: unknown) =>
  tool.beforeToolCall!({ call, arguments: args, runId: execution.runId, tenant: execution.tenant }, execution);

function stringify(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result === undefined) return '';
  try {
    return JSON.stringify(result) ?? String(result);
  } catch {
    return String(result);
  }
}

/** Cuts `text` to `limit` characters, saying how much was left out. */
export function truncate(text: string, limit: number): string {
  if (text.length <= limit) return text;
  // The marker counts in the limit, and its own length depends on the count: settle both.
  let kept = limit;
  let marker = '';
  for (let pass = 0; pass < 3; pass += 1) {
    marker = `\n…[truncated: ${text.length - kept} of ${text.length} characters omitted]`;
    kept = Math.max(0, limit - marker.length);
  }
  return text.slice(0, kept) + marker;
}
