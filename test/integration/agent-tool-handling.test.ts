import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { defineTool } from '../../shared/ports/define-tool.js';
import { createReactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';

const executed: string[] = [];

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'The status of an order; its result is the answer',
  input: z.object({ order: z.string() }),
  returnDirect: true,
  execute: ({ order }) => `Order ${order} shipped on 2026-11-20.`,
});

const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order (a person approves each refund)',
  input: z.object({ order: z.string(), amount: z.number() }),
  requiresApproval: true,
  execute: ({ order, amount }) => {
    executed.push(`refund ${order} ${amount}`);
    return { refunded: amount };
  },
});

const flaky = defineTool({
  name: 'flaky',
  description: 'Always fails',
  input: z.object({}),
  execute: () => {
    throw new AgentqError('TOOL_ERROR', 'the backend is down');
  },
});

/** Per-graph and per-run tool handling, returnDirect, the approval gate and per-run model settings, through the real openai SDK. */
describe('react-agent tool handling', () => {
  const custom = createReactAgentGraph({
    name: 'support-agent',
    toolHandling: {
      onToolError: ({ call, error }) =>
        `The ${call.function.name} service is unavailable (${(error as Error).message}); apologise to the user.`,
    },
  });
  const { server, env } = useAgentE2E({
    env: { OPENAI_API_KEY: 'test-key' },
    tools: [lookupOrder, refund, flaky],
    graphs: [custom],
  });
  beforeEach(() => {
    executed.length = 0;
  });

  const run = async (input: unknown, graph = 'react-agent') => {
    const queued = await env.client.enqueue({ graph, input });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };
  const toolMessages = async (runId: string) =>
    (await env.client.messages(runId)).filter((message) => message.role === 'tool').map((message) => message.content);

  it('model, temperature and maxOutputTokens of a run reach the request; maxToolRounds of a run caps the tool rounds', async () => {
    server.setScript([{ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }, { content: 'two' }]);
    const done = await run({
      query: 'add',
      tools: ['calculator'],
      model: 'other-model',
      temperature: 0.2,
      maxOutputTokens: 64,
      maxToolRounds: 1,
    });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'two' } });
    const [first, second] = server.chatRequests();
    expect(first!.body).toMatchObject({ model: 'other-model', temperature: 0.2, max_tokens: 64 });
    // One tool round allowed: the second request asks for a final answer, without tools.
    expect(second!.body.tools).toBeUndefined();
  });

  it('bad settings fail the run at the door, naming the field, with zero model calls', async () => {
    for (const [input, field] of [
      [{ query: 'q', temperature: 3 }, 'temperature'],
      [{ query: 'q', maxOutputTokens: 0 }, 'maxOutputTokens'],
      [{ query: 'q', toolHandling: { onToolError: 'explode' } }, 'toolHandling.onToolError'],
      [{ query: 'q', tools: ['no_such_tool'] }, 'no_such_tool'],
    ] as const) {
      const done = await run(input);
      expect(done.status).toBe('failed');
      expect(done.error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining(field) });
    }
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('a returnDirect tool ends the run with its result: no further model call', async () => {
    server.setScript([
      { toolCalls: [{ name: 'lookup_order', arguments: { order: 'A-17' } }] },
      { content: 'never asked' },
    ]);
    const done = await run({ query: 'where is my order A-17?' });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Order A-17 shipped on 2026-11-20.' } });
    expect(server.chatRequests()).toHaveLength(1);
    expect(validateHistory(await env.client.messages(done.id))).toEqual([]);
  });

  it("onUnknownTool 'fail' on a run fails it with TOOL_ERROR instead of telling the model", async () => {
    server.setScript([{ toolCalls: [{ name: 'web_search', arguments: { query: 'x' } }] }, { content: 'never asked' }]);
    const done = await run({ query: 'search', tools: ['calculator'], toolHandling: { onUnknownTool: 'fail' } });
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({
      code: 'TOOL_ERROR',
      message: expect.stringContaining("unknown tool 'web_search'"),
    });
    expect(server.chatRequests()).toHaveLength(1);
  });

  it("a graph's own onToolError handler writes the tool message; a run's 'fail' overrides it", async () => {
    server.setScript([{ toolCalls: [{ name: 'flaky', arguments: {} }] }, { content: 'Sorry, the service is down.' }]);
    const told = await run({ query: 'try it', tools: ['flaky'] }, 'support-agent');
    expect(told.status).toBe('completed');
    expect(await toolMessages(told.id)).toEqual([
      'The flaky service is unavailable (the backend is down); apologise to the user.',
    ]);

    server.reset();
    server.setScript([{ toolCalls: [{ name: 'flaky', arguments: {} }] }, { content: 'never asked' }]);
    const failed = await run(
      { query: 'try it', tools: ['flaky'], toolHandling: { onToolError: 'fail' } },
      'support-agent',
    );
    expect(failed.error).toMatchObject({ code: 'TOOL_ERROR', message: expect.stringContaining('the backend is down') });
  });

  it('a requiresApproval tool parks the run until a person approves; a rejection reaches the model instead', async () => {
    server.setScript([
      { toolCalls: [{ name: 'refund', arguments: { order: 'A-17', amount: 20 } }] },
      { content: 'Refunded.' },
    ]);
    const queued = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: 'refund A-17', tools: ['refund'] },
    });
    const waiting = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(waiting.status).toBe('waiting');
    expect(waiting.interrupt).toMatchObject({
      node: 'tool',
      request: { type: 'tool-approval', tool: 'refund', arguments: JSON.stringify({ order: 'A-17', amount: 20 }) },
    });
    expect(executed).toEqual([]);
    await env.client.resume(queued.id, { approved: true });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Refunded.' } });
    expect(executed).toEqual(['refund A-17 20']);

    server.reset();
    server.setScript([
      { toolCalls: [{ name: 'refund', arguments: { order: 'B-2', amount: 900 } }] },
      { content: 'I cannot refund that.' },
    ]);
    const second = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: 'refund B-2', tools: ['refund'] },
    });
    expect((await env.client.wait(second.id, { timeoutMs: 30_000 })).status).toBe('waiting');
    await env.client.resume(second.id, { approved: false, reason: 'amount too high' });
    const rejected = await env.client.wait(second.id, { timeoutMs: 30_000 });
    expect(rejected.status).toBe('completed');
    expect(executed).toEqual(['refund A-17 20']);
    expect((await toolMessages(second.id))[0]).toMatch(/^Error: a person rejected this tool call: amount too high\./);
  });

  it('parallel approvals: two requiresApproval calls of one response are asked one at a time; each answer applies to its own call', async () => {
    server.setScript([
      {
        toolCalls: [
          { name: 'refund', arguments: { order: 'C-1', amount: 5 } },
          { name: 'refund', arguments: { order: 'C-2', amount: 500 } },
        ],
      },
      { content: 'Refunded C-1 only.' },
    ]);
    const queued = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: 'refund C-1 and C-2', tools: ['refund'] },
    });
    // The sibling steps of one superstep ask in either order: each is answered by what it asks about.
    const asked: string[] = [];
    for (let round = 0; round < 2; round += 1) {
      const waiting = await env.client.wait(queued.id, { timeoutMs: 30_000 });
      expect(waiting).toMatchObject({
        status: 'waiting',
        interrupt: { node: 'tool', request: { type: 'tool-approval', tool: 'refund' } },
      });
      const request = waiting.interrupt!.request as { toolCallId: string; arguments: string };
      asked.push(request.toolCallId);
      const order = (JSON.parse(request.arguments) as { order: string }).order;
      // Nothing runs before its approval. (The call approved in round one may or may not have run by the
      // time its sibling asks: the two are parallel steps.)
      expect(executed.filter((call) => call.startsWith(`refund ${order} `))).toEqual([]);
      await env.client.resume(
        queued.id,
        order === 'C-1' ? { approved: true } : { approved: false, reason: 'too much' },
      );
    }
    expect([...asked].sort()).toEqual(['call_0_0', 'call_0_1']);
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Refunded C-1 only.' } });
    // Approved once, executed once (not again when the sibling's answer resumed the superstep).
    expect(executed).toEqual(['refund C-1 5']);
    const messages = await env.client.messages(queued.id);
    const resultOf = (id: string) =>
      messages.find((message) => message.role === 'tool' && message.tool_call_id === id)?.content;
    expect(resultOf('call_0_0')).toBe(JSON.stringify({ refunded: 5 }));
    expect(resultOf('call_0_1')).toMatch(/^Error: a person rejected this tool call: too much\./);
    expect(validateHistory(messages)).toEqual([]);
    expect(server.chatRequests()).toHaveLength(2);
  });
});
