import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { StepAbort } from '../../shared/contracts/abort.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { ToolCall } from '../../shared/ports/language-model.js';
import { defineTool, type ToolExecutionContext } from '../../shared/ports/define-tool.js';
import { executeToolCall, truncate } from '../../worker/agents/tools/execute-tool-call.js';
import { ToolRegistry } from '../../worker/agents/tools/tool-registry.js';
import { builtInTools } from '../../worker/agents/tools/built-in-tools.js';
import { currentTimeTool } from '../../worker/agents/tools/current-time.js';
import { fakeNodeContext } from '../../testing/fake-node-context.js';

const call = (name: string, args: unknown, id = 'call_1'): ToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
});

describe('defineTool', () => {
  it('derives the JSON Schema the model gets from zod (defaults optional, no $schema)', () => {
    const tool = defineTool({
      name: 'search',
      description: 'Searches documents',
      input: z.object({ query: z.string().describe('what to look for'), limit: z.number().int().default(5) }),
      execute: () => [],
    });
    expect(tool.describe()).toEqual({
      name: 'search',
      description: 'Searches documents',
      parameters: {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'what to look for' },
          limit: { type: 'integer', default: 5, minimum: expect.any(Number), maximum: expect.any(Number) },
        },
        required: ['query'],
      },
    });
  });

  it('rejects bad names, empty descriptions and non-object inputs with clear messages', () => {
    expect(() => defineTool({ name: 'has space', description: 'x', input: z.object({}), execute: () => 1 })).toThrow(
      /tool name 'has space' must be 1-64 characters/,
    );
    expect(() => defineTool({ name: 'quiet', description: ' ', input: z.object({}), execute: () => 1 })).toThrow(
      /needs a description/,
    );
    expect(() => defineTool({ name: 'scalar', description: 'x', input: z.string(), execute: () => 1 })).toThrow(
      /input must be a z.object/,
    );
  });
});

describe('ToolRegistry', () => {
  it('selects the tools a run asks for, all when it names none, and names the unknown ones', () => {
    const registry = new ToolRegistry(builtInTools());
    expect(registry.select(undefined).map((tool) => tool.name)).toEqual(['calculator', 'current_time']);
    expect(registry.select(['current_time']).map((tool) => tool.name)).toEqual(['current_time']);
    expect(registry.select([])).toEqual([]);
    expect(() => registry.select(['calculator', 'fly', 'swim'])).toThrow(
      "unknown tools 'fly', 'swim' in the run's input; this worker has: calculator, current_time",
    );
    expect(() => registry.register(currentTimeTool)).toThrow(/registered twice/);
  });
});

describe('executeToolCall', () => {
  const seen: ToolExecutionContext[] = [];
  const echo = defineTool({
    name: 'echo',
    description: 'Echoes its text',
    input: z.object({ text: z.string() }),
    execute: ({ text }, context) => {
      seen.push(context);
      return text;
    },
  });
  const flaky = defineTool({
    name: 'flaky',
    description: 'Fails transiently',
    input: z.object({}),
    execute: () => {
      throw new AgentqError('PROVIDER_ERROR', 'upstream 503', { retryable: true });
    },
  });
  const options = { tools: [echo, flaky], maxResultChars: 400, traceContent: false, maxAttempts: 3 };

  it('runs the tool with an idempotency key runId:step:toolCallId and returns its result', async () => {
    const { context } = fakeNodeContext({});
    expect(await executeToolCall(call('echo', { text: 'hello' }, 'call_9'), context, options)).toBe('hello');
    expect(seen.at(-1)).toMatchObject({
      runId: 'run-1',
      toolCallId: 'call_9',
      idempotencyKey: 'run-1:s0.t0:call_9',
      attempt: 1,
    });
  });

  it('cuts a long result with a marker', async () => {
    const { context } = fakeNodeContext({});
    const result = await executeToolCall(call('echo', { text: 'x'.repeat(500) }), context, options);
    expect(result).toHaveLength(400);
    const kept = result.indexOf('\n');
    expect(result).toMatch(new RegExp(`^x{${kept}}\\n…\\[truncated: ${500 - kept} of 500 characters omitted\\]$`));
    expect(truncate('short', 100)).toBe('short');
  });

  it('tells the model about unknown tools, invalid JSON and invalid arguments', async () => {
    const { context } = fakeNodeContext({});
    expect(await executeToolCall(call('nope', {}), context, options)).toBe(
      "Error: there is no tool named 'nope'. Available tools: echo, flaky. Call one of these, or answer without tools.",
    );
    expect(await executeToolCall(call('echo', '{"text": '), context, options)).toMatch(
      /^Error: the arguments of tool 'echo' are not valid JSON \(.+\)\. Send a JSON object matching its parameters: \{"type":"object"/,
    );
    expect(await executeToolCall(call('echo', { text: 5 }), context, options)).toMatch(
      /^Error: invalid arguments for tool 'echo':\n✖ Invalid input: expected string, received number\n {2}→ at text\nIts parameters:/,
    );
    // An empty arguments string means no arguments.
    expect(await executeToolCall(call('echo', ''), context, options)).toMatch(/invalid arguments.*\n.*\n.*at text/);
  });

  it('retries a retryable tool error while attempts remain, then tells the model', async () => {
    const early = fakeNodeContext({}, { attempt: 2 });
    await expect(executeToolCall(call('flaky', {}), early.context, options)).rejects.toThrow('upstream 503');
    const last = fakeNodeContext({}, { attempt: 3 });
    expect(await executeToolCall(call('flaky', {}), last.context, options)).toBe(
      "Error: tool 'flaky' failed: upstream 503",
    );
  });

  it("rethrows the step's abort instead of reporting it to the model", async () => {
    const controller = new AbortController();
    const slow = defineTool({
      name: 'slow',
      description: 'Waits for the abort',
      input: z.object({}),
      execute: (_input, { abortSignal }) =>
        new Promise((_resolve, reject) =>
          abortSignal.addEventListener('abort', () => reject(new Error('aborted')), { once: true }),
        ),
    });
    const { context } = fakeNodeContext({}, { abortSignal: controller.signal });
    const pending = executeToolCall(call('slow', {}), context, { ...options, tools: [slow] });
    const reason = new StepAbort('timeout', 'step timed out');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });

  it('current_time answers UTC, a local time for an IANA zone, and names a bad zone', async () => {
    const { context } = fakeNodeContext({});
    const tools = { ...options, tools: [currentTimeTool] };
    expect(JSON.parse(await executeToolCall(call('current_time', {}), context, tools))).toEqual({
      iso: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
      timezone: 'UTC',
    });
    expect(
      JSON.parse(await executeToolCall(call('current_time', { timezone: 'Asia/Tokyo' }), context, tools)),
    ).toMatchObject({ timezone: 'Asia/Tokyo', local: expect.stringMatching(/GMT\+09:00$/) });
    expect(await executeToolCall(call('current_time', { timezone: 'Mars/Olympus' }), context, tools)).toMatch(
      /failed: unknown time zone 'Mars\/Olympus'/,
    );
  });
});
