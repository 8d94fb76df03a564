import { z } from 'zod';
import type { Logger } from 'pino';
import { AgentqError } from '../contracts/errors.js';
import type { ToolCall, ToolDescription, ToolExample } from './language-model.js';

/** What a tool's `execute` gets besides its validated input. */
export interface ToolExecutionContext {
  readonly runId: string;
  /** The run's tenant. */
  readonly tenant: string;
  /** The model's id for this call. */
  readonly toolCallId: string;
  /**
   * `runId:step:toolCallId`: the same on every attempt of this call (a retry, a re-delivery after a
   * crash), different for every other call. Pass it to the systems a tool changes, so a repeated
   * execution does not repeat the side effect.
   */
  readonly idempotencyKey: string;
  /** 1 on the first attempt of this tool step. */
  readonly attempt: number;
  /** Fires on cancellation, timeout, deadline or worker shutdown: stop and throw. */
  readonly abortSignal: AbortSignal;
  readonly logger: Logger;
}

/** What a tool's own `beforeToolCall` sees: the call and its arguments, parsed from JSON (not yet checked against the schema). */
export interface ToolCallCheck {
  call: ToolCall;
  /** The arguments the call would run with (a graph's hook may have rewritten the model's). */
  arguments: unknown;
  runId: string;
  tenant: string;
}

/**
 * A `beforeToolCall` hook's answer: nothing (or `{ action: 'run' }`) runs the call; `{ action: 'rewrite',
 * arguments }` runs it with these arguments instead (checked against the tool's schema like the model's);
 * `{ action: 'veto', message }` does not run it, and the model reads `message` as the call's result.
 */
export type ToolCallDecision =
  | undefined
  | void
  | { action: 'run' }
  | { action: 'rewrite'; arguments: unknown }
  | { action: 'veto'; message: string };

export interface ToolDefinition<Input> {
  /** What the model calls it: 1-64 letters, digits, `_` or `-` (OpenAI's rule for function names). */
  name: string;
  /** What it does and when to use it; the model reads this. */
  description: string;
  /** The arguments, as a zod schema; the model gets its JSON Schema (`z.toJSONSchema`). */
  input: z.ZodType<Input>;
  /**
   * Worked examples: a request a user might make and the arguments it should produce, each checked against
   * `input` here. GigaChat reads them (`few_shot_examples`); for an OpenAI-compatible model they are
   * written into the description only when AGENTQ_TOOL_EXAMPLES_IN_DESCRIPTION is on. @default none
   */
  examples?: readonly ToolExample[];
  /**
   * Does the work. The result is sent back to the model (a string as is, anything else as JSON). Throw
   * to report a failure: the model is told what went wrong. Throw an `AgentqError` with
   * `retryable: true` for a transient failure worth another attempt of the step first.
   */
  execute(input: Input, context: ToolExecutionContext): unknown;
  /**
   * The tool's result ends the run as its answer: no further model call reads it (a lookup whose result
   * is what the user wants, a hand-off). A failed call still goes back to the model. @default false
   */
  returnDirect?: boolean;
  /**
   * A person approves each call first: the run parks (`waiting`, the interrupt names the tool and its
   * arguments) until `resume` answers `{ approved: true }` or `{ approved: false, reason? }`. A rejected
   * call reaches the model as a tool message saying so. @default false
   */
  requiresApproval?: boolean;
  /**
   * Sees each call of this tool before it runs, under whatever graph the run chose (after the graph's own
   * hook, on the arguments that hook leaves), and may veto or rewrite it. A check that belongs to the
   * tool lives here, so no choice of graph skips it. Throw to fail the step. @default none
   */
  beforeToolCall?(request: ToolCallCheck, context: ToolExecutionContext): ToolCallDecision | Promise<ToolCallDecision>;
}

/** A tool ready to register: its definition plus the JSON Schema sent to the model. */
export interface Tool<Input = unknown> extends ToolDefinition<Input> {
  readonly parameters: Record<string, unknown>;
  /** The tool as the model sees it. */
  describe(): ToolDescription;
}

/** A tool of any input type (registries hold many). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry holds tools of every input type
export type AnyTool = Tool<any>;

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Defines a tool for agents.
 *
 * ```ts
 * const weather = defineTool({
 *   name: 'weather',
 *   description: 'Current weather in a city',
 *   input: z.object({ city: z.string() }),
 *   execute: async ({ city }, { abortSignal }) => fetchWeather(city, abortSignal),
 * });
 * startWorker({ tools: [weather] });
 * ```
 */
export function defineTool<Input>(definition: ToolDefinition<Input>): Tool<Input> {
  if (!NAME_PATTERN.test(definition.name)) {
    throw new AgentqError(
      'INVALID_INPUT',
      `tool name '${definition.name}' must be 1-64 characters of letters, digits, '_' or '-'`,
    );
  }
  if (definition.description.trim() === '') {
    throw new AgentqError(
      'INVALID_INPUT',
      `tool '${definition.name}' needs a description: the model decides from it when to call the tool`,
    );
  }
  const parameters = toParameters(definition.name, definition.input);
  const examples = checkedExamples(definition);
  const description: ToolDescription = {
    name: definition.name,
    description: definition.description,
    parameters,
    ...(examples.length > 0 ? { examples } : {}),
  };
  return Object.freeze({
    ...definition,
    ...(definition.examples ? { examples } : {}),
    parameters,
    describe: () => description,
  });
}

/**
 * The examples as plain JSON, each checked now: an example the schema refuses would teach the model
 * arguments the tool then rejects, so it fails where the tool is defined, not in a run.
 */
function checkedExamples(definition: ToolDefinition<unknown>): ToolExample[] {
  return (definition.examples ?? []).map((example, index) => {
    const which = `tool '${definition.name}': example ${index + 1}`;
    if (typeof example?.request !== 'string' || example.request.trim() === '')
      throw new AgentqError('INVALID_INPUT', `${which} needs a request: the user's words the arguments answer`);
    const params: unknown = example.params;
    if (params === null || typeof params !== 'object' || Array.isArray(params))
      throw new AgentqError('INVALID_INPUT', `${which} ('${example.request}'): params must be an object of arguments`);
    let checked: ReturnType<z.ZodType['safeParse']>;
    try {
      checked = definition.input.safeParse(params);
    } catch (error) {
      throw new AgentqError(
        'INVALID_INPUT',
        `${which} ('${example.request}'): its params could not be checked against the input schema (${(error as Error).message})`,
        { cause: error },
      );
    }
    if (!checked.success)
      throw new AgentqError(
        'INVALID_INPUT',
        `${which} ('${example.request}'): params do not satisfy the tool's input schema:\n${z.prettifyError(checked.error)}`,
        { details: { example: index, issues: checked.error.issues } },
      );
    // A copy as JSON: what the provider receives and a recording keeps, whatever the caller mutates later.
    return { request: example.request, params: JSON.parse(JSON.stringify(params)) as Record<string, unknown> };
  });
}

function toParameters(name: string, input: z.ZodType): Record<string, unknown> {
  let schema: Record<string, unknown>;
  try {
    // 'input': fields with defaults are optional for the caller (the model), as zod parses them.
    schema = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    throw new AgentqError(
      'INVALID_INPUT',
      `tool '${name}': its input schema cannot be expressed as JSON Schema (${(error as Error).message})`,
      { cause: error },
    );
  }
  if (schema.type !== 'object') {
    throw new AgentqError(
      'INVALID_INPUT',
      `tool '${name}': input must be a z.object(...) (function arguments are a JSON object), got JSON Schema type '${String(schema.type)}'`,
    );
  }
  // Providers want the bare object schema; the $schema marker only confuses some of them.
  delete schema.$schema;
  return schema;
}
