import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentqError } from '../../shared/contracts/errors.js';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { defineTool } from '../../shared/ports/define-tool.js';
import { MockLanguageModel, runInProcess, type InProcessResult } from '../../testing/index.js';
import { createReactAgentGraph, reactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { builtInTools } from '../../worker/agents/tools/built-in-tools.js';
import { ToolRegistry } from '../../worker/agents/tools/tool-registry.js';
import { executed, refund } from '../helpers/agent-fixtures.js';

// react-agent's tool handling on the in-process runner and a scripted model; the end-to-end file
// (test/integration/agent-tool-handling.test.ts) keeps run settings over HTTP and approvals through the API.

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'The status of an order; its result is the answer',
  input: z.object({ order: z.string() }),
  returnDirect: true,
  execute: ({ order }) => `Order ${order} shipped on 2026-11-20.`,
});
const flaky = defineTool({
  name: 'flaky',
  description: 'Always fails',
  input: z.object({}),
  execute: () => {
    throw new AgentqError('TOOL_ERROR', 'the backend is down');
  },
});
const supportAgent = createReactAgentGraph({
  name: 'support-agent',
  toolHandling: {
    onToolError: ({ call, error }) =>
      `The ${call.function.name} service is unavailable (${(error as Error).message}); apologise to the user.`,
  },
});

const services = (languageModel: MockLanguageModel) => ({
  languageModel,
  tools: new ToolRegistry([...builtInTools(), lookupOrder, refund, flaky]),
});
const toolMessages = (result: InProcessResult) =>
  result.messages.filter((message) => message.role === 'tool').map((message) => message.content);

describe('react-agent tool handling', () => {
  beforeEach(() => {
    executed.length = 0;
  });

  it('model, temperature and maxOutputTokens of a run reach the request; maxToolRounds caps the tool rounds', async () => {
    const llm = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }, 'two'],
    });
    const done = await runInProcess(
      reactAgentGraph,
      {
        query: 'add',
        tools: ['calculator'],
        model: 'other-model',
        temperature: 0.2,
        maxOutputTokens: 64,
        maxToolRounds: 1,
      },
      { services: services(llm) },
    );
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'two' } });
    expect(llm.calls[0]).toMatchObject({ model: 'other-model', temperature: 0.2, maxTokens: 64 });
    // One tool round allowed: the second request asks for a final answer, without tools.
    expect(llm.calls[1]!.tools).toBeUndefined();
  });

  it('bad settings fail the run at the door, naming the field, with zero model calls', async () => {
    const llm = new MockLanguageModel();
    for (const [input, field] of [
      [{ query: 'q', temperature: 3 }, 'temperature'],
      [{ query: 'q', maxOutputTokens: 0 }, 'maxOutputTokens'],
      [{ query: 'q', toolHandling: { onToolError: 'explode' } }, 'toolHandling.onToolError'],
      [{ query: 'q', tools: ['no_such_tool'] }, 'no_such_tool'],
    ] as const) {
      const done = await runInProcess(reactAgentGraph, input, { services: services(llm) });
      expect(done.status).toBe('failed');
      expect(done.error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining(field) });
    }
    expect(llm.calls).toHaveLength(0);
  });

  it('a returnDirect tool ends the run with its result: no further model call', async () => {
    const llm = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'lookup_order', arguments: { order: 'A-17' } }] }, 'never asked'],
    });
    const done = await runInProcess(reactAgentGraph, { query: 'where is my order A-17?' }, { services: services(llm) });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Order A-17 shipped on 2026-11-20.' } });
    expect(llm.calls).toHaveLength(1);
    expect(validateHistory(done.messages)).toEqual([]);
  });

  it("onUnknownTool 'fail' on a run fails it with TOOL_ERROR instead of telling the model", async () => {
    const llm = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'web_search', arguments: { query: 'x' } }] }, 'never asked'],
    });
    const done = await runInProcess(
      reactAgentGraph,
      { query: 'search', tools: ['calculator'], toolHandling: { onUnknownTool: 'fail' } },
      { services: services(llm) },
    );
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({
      code: 'TOOL_ERROR',
      message: expect.stringContaining("unknown tool 'web_search'"),
    });
    expect(llm.calls).toHaveLength(1);
  });

  it("a graph's own onToolError handler writes the tool message; a run's 'fail' overrides it", async () => {
    const toldModel = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'flaky', arguments: {} }] }, 'Sorry, the service is down.'],
    });
    const told = await runInProcess(
      supportAgent,
      { query: 'try it', tools: ['flaky'] },
      { services: services(toldModel) },
    );
    expect(told.status).toBe('completed');
    expect(toolMessages(told)).toEqual([
      'The flaky service is unavailable (the backend is down); apologise to the user.',
    ]);

    const failModel = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'flaky', arguments: {} }] }, 'never asked'],
    });
    const failed = await runInProcess(
      supportAgent,
      { query: 'try it', tools: ['flaky'], toolHandling: { onToolError: 'fail' } },
      { services: services(failModel) },
    );
    expect(failed.error).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringContaining('the backend is down') });
  });

  it('a requiresApproval tool parks the run until a person approves; a rejection reaches the model instead', async () => {
    const llm = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'refund', arguments: { order: 'A-17', amount: 20 } }] }, 'Refunded.'],
    });
    const waiting = await runInProcess(
      reactAgentGraph,
      { query: 'refund A-17', tools: ['refund'] },
      { services: services(llm) },
    );
    expect(waiting.status).toBe('waiting');
    expect(waiting.interrupt).toMatchObject({
      node: 'tool',
      request: { type: 'tool-approval', tool: 'refund', arguments: JSON.stringify({ order: 'A-17', amount: 20 }) },
    });
    expect(executed).toEqual([]);
    const done = await waiting.resume({ approved: true });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Refunded.' } });
    expect(executed).toEqual(['refund A-17 20']);

    const rejectModel = new MockLanguageModel({
      generate: [
        { toolCalls: [{ name: 'refund', arguments: { order: 'B-2', amount: 900 } }] },
        'I cannot refund that.',
      ],
    });
    const second = await runInProcess(
      reactAgentGraph,
      { query: 'refund B-2', tools: ['refund'] },
      { services: services(rejectModel) },
    );
    expect(second.status).toBe('waiting');
    const rejected = await second.resume({ approved: false, reason: 'amount too high' });
    expect(rejected.status).toBe('completed');
    expect(executed).toEqual(['refund A-17 20']);
    expect(toolMessages(rejected)[0]).toMatch(/^Error: a person rejected this tool call: amount too high\./);
  });

  it('parallel approvals: two requiresApproval calls of one response are asked one at a time; each answer applies to its own call', async () => {
    const llm = new MockLanguageModel({
      generate: [
        {
          toolCalls: [
            { name: 'refund', arguments: { order: 'C-1', amount: 5 }, id: 'call_c1' },
            { name: 'refund', arguments: { order: 'C-2', amount: 500 }, id: 'call_c2' },
          ],
        },
        'Refunded C-1 only.',
      ],
    });
    let result = await runInProcess(
      reactAgentGraph,
      { query: 'refund C-1 and C-2', tools: ['refund'] },
      { services: services(llm) },
    );
    const asked: string[] = [];
    for (let round = 0; round < 2; round += 1) {
      expect(result).toMatchObject({
        status: 'waiting',
        interrupt: { node: 'tool', request: { type: 'tool-approval', tool: 'refund' } },
      });
      const request = result.interrupt!.request as { toolCallId: string; arguments: string };
      asked.push(request.toolCallId);
      const order = (JSON.parse(request.arguments) as { order: string }).order;
      expect(executed.filter((call) => call.startsWith(`refund ${order} `))).toEqual([]);
      result = await result.resume(order === 'C-1' ? { approved: true } : { approved: false, reason: 'too much' });
    }
    expect([...asked].sort()).toEqual(['call_c1', 'call_c2']);
    expect(result).toMatchObject({ status: 'completed', output: { answer: 'Refunded C-1 only.' } });
    // Approved once, executed once (not again when the sibling's answer resumed the superstep).
    expect(executed).toEqual(['refund C-1 5']);
    const resultOf = (id: string) =>
      result.messages.find((message) => message.role === 'tool' && message.tool_call_id === id)?.content;
    expect(resultOf('call_c1')).toBe(JSON.stringify({ refunded: 5 }));
    expect(resultOf('call_c2')).toMatch(/^Error: a person rejected this tool call: too much\./);
    expect(validateHistory(result.messages)).toEqual([]);
    expect(llm.calls).toHaveLength(2);
  });
});
