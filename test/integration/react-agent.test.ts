import { contentText } from '../../shared/contracts/run-record.js';
import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import { FINAL_ANSWER_REQUEST } from '../../worker/agents/graphs/react-agent.js';
import { type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';
import { startTestEnv } from '../helpers/test-env.js';

/** The react-agent end to end: client → queue → worker → real openai SDK → scripted server over HTTP. */
describe('react-agent', () => {
  const { server, env } = useAgentE2E({
    env: {
      OPENAI_API_KEY: 'test-key',
      AGENTQ_PRICES: 'scripted-chat:1:2,other:5:5',
    },
  });

  const run = async (input: unknown, options: { tokenBudget?: number } = {}) => {
    const queued = await env.client.enqueue({
      graph: 'react-agent',
      input,
      ...(options.tokenBudget ? { options: { tokenBudget: options.tokenBudget } } : {}),
    });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };
  const messagesOf = (request: ReturnType<ScriptedOpenAIServer['chatRequests']>[number]) =>
    request.body.messages as unknown as Message[];

  it('answers with one tool call: model → tool → model, history valid (I3)', async () => {
    server.setScript([
      { toolCalls: [{ name: 'calculator', arguments: { expression: '2^10' } }] },
      { content: '2^10 is 1024.' },
    ]);
    const done = await run({ query: 'what is 2^10?', tools: ['calculator'] });
    expect(done).toMatchObject({ status: 'completed', output: { answer: '2^10 is 1024.' } });

    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(history[3]).toEqual({
      role: 'tool',
      tool_call_id: 'call_0_0',
      content: JSON.stringify({ expression: '2^10', result: 1024 }),
    });

    const requests = server.chatRequests();
    expect(requests).toHaveLength(2);
    // Only the tools the run asked for are offered, as JSON Schema from zod.
    expect(requests[0]!.body.tools).toEqual([
      expect.objectContaining({
        type: 'function',
        function: expect.objectContaining({
          name: 'calculator',
          parameters: expect.objectContaining({ type: 'object', required: ['expression'] }),
        }),
      }),
    ]);
    expect(requests[0]!.headers.authorization).toBe('Bearer test-key');
    expect(messagesOf(requests[1]!)).toEqual(history.slice(0, 4));

    const steps = await env.client.steps(done.id);
    expect(steps.map((step) => [step.superstep, step.node])).toEqual([
      [0, 'model'],
      [1, 'tool'],
      [2, 'model'],
    ]);
  });

  it('runs parallel tool calls as one superstep, results in call order', async () => {
    server.setScript([
      {
        toolCalls: [
          { name: 'calculator', arguments: { expression: '1+1' } },
          { name: 'current_time', arguments: { timezone: 'Europe/Paris' } },
          { name: 'calculator', arguments: { expression: '(2+3)*4' } },
        ],
      },
      { content: 'done' },
    ]);
    const done = await run({ query: 'several things at once' });
    expect(done.status).toBe('completed');
    const steps = await env.client.steps(done.id);
    const toolSteps = steps.filter((step) => step.node === 'tool');
    expect(toolSteps).toHaveLength(3);
    expect(new Set(toolSteps.map((step) => step.superstep))).toEqual(new Set([1]));
    expect(toolSteps.map((step) => step.task).sort()).toEqual([0, 1, 2]);
    expect(steps.filter((step) => step.node === 'model').map((step) => step.superstep)).toEqual([0, 2]);

    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    const toolMessages = history.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.tool_call_id)).toEqual(['call_0_0', 'call_0_1', 'call_0_2']);
    expect(JSON.parse(contentText(toolMessages[0]!.content))).toEqual({ expression: '1+1', result: 2 });
    expect(JSON.parse(contentText(toolMessages[1]!.content))).toMatchObject({ timezone: 'Europe/Paris' });
    expect(JSON.parse(contentText(toolMessages[2]!.content))).toEqual({ expression: '(2+3)*4', result: 20 });
    // Each tool call is visible in the run's event stream.
    const events = await env.client.store.eventLog.events(done.id);
    const toolEvents = events.filter((event) => event.type === 'tool-call' || event.type === 'tool-result');
    expect(
      toolEvents
        .filter((event) => event.type === 'tool-call')
        .map((event) => event.data.toolCallId)
        .sort(),
    ).toEqual(['call_0_0', 'call_0_1', 'call_0_2']);
    expect(toolEvents.filter((event) => event.type === 'tool-result')).toHaveLength(3);
    expect(steps.find((step) => step.node === 'model')?.usage?.model).toBeTruthy();
    // Without `tools` in the input, every registered tool is offered.
    expect(
      (server.chatRequests()[0]!.body.tools ?? []).map(
        (tool) => (tool as { function: { name: string } }).function.name,
      ),
    ).toEqual(['calculator', 'current_time']);
  });

  it('a failing tool, an unknown tool and bad arguments each reach the model as a tool message; the run completes', async () => {
    server.setScript([
      {
        toolCalls: [
          { name: 'calculator', arguments: { expression: '1/0' } },
          { name: 'web_search', arguments: { query: 'x' } },
          { name: 'calculator', arguments: '{"expression": ' },
          { name: 'calculator', arguments: { expr: 42 } },
        ],
      },
      { content: 'I could not compute that.' },
    ]);
    const done = await run({ query: 'divide by zero', tools: ['calculator'] });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'I could not compute that.' } });
    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    const results = history.filter((message) => message.role === 'tool').map((message) => message.content ?? '');
    expect(results).toHaveLength(4);
    expect(results[0]).toBe("Error: tool 'calculator' failed: division by zero at position 2");
    expect(results[1]).toMatch(/^Error: there is no tool named 'web_search'\. Available tools: calculator\./);
    expect(results[2]).toMatch(/^Error: the arguments of tool 'calculator' are not valid JSON/);
    expect(results[3]).toMatch(/^Error: invalid arguments for tool 'calculator':\n.*expression/s);
    // The model saw all four.
    expect(messagesOf(server.chatRequests()[1]!).filter((message) => message.role === 'tool')).toHaveLength(4);
  });

  it('usage is the sum of the provider-reported usage, cost from AGENTQ_PRICES', async () => {
    server.setScript([
      {
        toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }],
        usage: { prompt_tokens: 1000, completion_tokens: 50 },
      },
      { content: '42', usage: { prompt_tokens: 1200, completion_tokens: 10 } },
    ]);
    const done = await run({ query: 'six times seven', tools: ['calculator'] });
    expect(done.status).toBe('completed');
    expect(done.usage.inputTokens).toBe(2200);
    expect(done.usage.outputTokens).toBe(60);
    // 1 USD per 1M input tokens, 2 per 1M output tokens.
    expect(done.usage.costUsd).toBeCloseTo((2200 * 1 + 60 * 2) / 1e6, 12);
    const steps = await env.client.steps(done.id);
    expect(steps.map((step) => step.usage ?? null)).toEqual([
      {
        inputTokens: 1000,
        outputTokens: 50,
        costUsd: expect.closeTo(0.0011, 12),
        uncachedCostUsd: expect.closeTo(0.0011, 12),
        model: 'scripted-chat',
        finishReason: 'tool_calls',
      },
      null,
      {
        inputTokens: 1200,
        outputTokens: 10,
        costUsd: expect.closeTo(0.00122, 12),
        uncachedCostUsd: expect.closeTo(0.00122, 12),
        model: 'scripted-chat',
        finishReason: 'stop',
      },
    ]);
  });

  it('the model node refuses before calling when the remaining budget cannot cover the prompt', async () => {
    server.setScript([{ content: 'never sent' }]);
    const done = await run(
      { query: 'a question whose prompt alone is more than a few tokens long' },
      { tokenBudget: 5 },
    );
    expect(done).toMatchObject({
      status: 'failed',
      error: { code: 'BUDGET_EXCEEDED', node: 'model', retryable: false },
    });
    expect(done.error?.message).toMatch(/needs about \d+ tokens .* has 5 left/);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('the token budget stops the run at the next step once the spent tokens reach it', async () => {
    server.setScript([
      {
        toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }],
        usage: { prompt_tokens: 900, completion_tokens: 200 },
      },
      { content: 'never asked' },
    ]);
    const done = await run({ query: 'one plus one', tools: ['calculator'] }, { tokenBudget: 1000 });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'BUDGET_EXCEEDED', node: 'tool' } });
    expect(done.usage).toMatchObject({ inputTokens: 900, outputTokens: 200 });
    expect(server.chatRequests()).toHaveLength(1);
    // The committed context is kept and valid: the assistant's call has no result yet, so it is not sent anywhere.
    const history = await env.client.messages(done.id);
    expect(history.map((message) => message.role)).toEqual(['system', 'user', 'assistant']);
  });

  it('after AGENTQ_MAX_TOOL_ROUNDS the model is asked for a final answer without tools', async () => {
    const limited = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', AGENTQ_MAX_TOOL_ROUNDS: '2' },
    });
    try {
      const call = { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] };
      server.setScript([call, call, { content: 'final: 2' }]);
      const queued = await limited.client.enqueue({
        graph: 'react-agent',
        input: { query: 'loop', tools: ['calculator'] },
      });
      const done = await limited.client.wait(queued.id, { timeoutMs: 30_000 });
      expect(done).toMatchObject({ status: 'completed', output: { answer: 'final: 2' } });
      const requests = server.chatRequests();
      expect(requests.map((request) => request.body.tools === undefined)).toEqual([false, false, true]);
      expect(messagesOf(requests[2]!).at(-1)).toEqual({ role: 'user', content: FINAL_ANSWER_REQUEST });
      expect(validateHistory(await limited.client.messages(done.id))).toEqual([]);

      // A model that still calls tools then fails the run clearly, with the history still valid.
      server.reset();
      server.setScript([call, call, call]);
      const stubborn = await limited.client.enqueue({
        graph: 'react-agent',
        input: { query: 'loop', tools: ['calculator'] },
      });
      const failed = await limited.client.wait(stubborn.id, { timeoutMs: 30_000 });
      expect(failed).toMatchObject({ status: 'failed', error: { code: 'TOOL_ERROR', node: 'model' } });
      expect(failed.error?.message).toMatch(/AGENTQ_MAX_TOOL_ROUNDS/);
      expect(validateHistory(await limited.client.messages(stubborn.id))).toEqual([]);
    } finally {
      await limited.close();
    }
  });

  it('an unknown tool name in the input fails the run before any model call', async () => {
    server.setScript([{ content: 'never sent' }]);
    const done = await run({ query: 'hi', tools: ['calculator', 'teleport'] });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT', node: 'model' } });
    expect(done.error?.message).toBe(
      "unknown tool 'teleport' in the run's input; this worker has: calculator, current_time",
    );
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('an invalid input fails the run at intake with a precise message and no model call', async () => {
    server.setScript([{ content: 'never sent' }]);
    const done = await run({ query: '', tool: ['calculator'] });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(done.error?.message).toMatch(/query must not be empty/);
    expect(done.error?.message).toMatch(/tool/);
    expect(server.chatRequests()).toHaveLength(0);
  });
});

describe('react-agent without a configured model', () => {
  it('fails the run with a message saying what to set', async () => {
    const env = await startTestEnv();
    try {
      const queued = await env.client.enqueue({ graph: 'react-agent', input: { query: 'hi' } });
      const done = await env.client.wait(queued.id, { timeoutMs: 15_000 });
      expect(done).toMatchObject({ status: 'failed', error: { code: 'PROVIDER_ERROR', retryable: false } });
      expect(done.error?.message).toMatch(/set LLM_MODEL .*OPENAI_BASE_URL/);
    } finally {
      await env.close();
    }
  });
});
