import { beforeEach, describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';
import { executed, refund } from '../helpers/agent-fixtures.js';

/**
 * Per-run model settings over HTTP and parallel approvals through the API, the engine and Redis, through the
 * real openai SDK. The rest of tool handling is tested in test/unit/tool-handling-logic.test.ts.
 */
describe('react-agent tool handling', () => {
  const { server, env } = useAgentE2E({
    env: { OPENAI_API_KEY: 'test-key' },
    tools: [refund],
  });
  beforeEach(() => {
    executed.length = 0;
  });

  const run = async (input: unknown, graph = 'react-agent') => {
    const queued = await env.client.enqueue({ graph, input });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

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

/** The operator's allow predicate (`services.allowTool`) through the engine, Redis and the real openai SDK. */
describe("the operator's tool allow-list", () => {
  const { server, env } = useAgentE2E({
    env: { OPENAI_API_KEY: 'test-key' },
    tools: [refund],
    services: { allowTool: (tenant, tool) => !(tenant === 'acme' && tool === 'refund') },
  });
  beforeEach(() => {
    executed.length = 0;
  });

  it('a refused tool is not offered, a call of it is not run, and a run naming it fails before any model call', async () => {
    server.setScript([{ toolCalls: [{ name: 'refund', arguments: { order: 'A-1', amount: 5 } }] }, { content: 'No.' }]);
    const offered = await env.client.enqueue({ graph: 'react-agent', tenant: 'acme', input: { query: 'refund A-1' } });
    const done = await env.client.wait(offered.id, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'No.' } });
    const names = (server.chatRequests()[0]!.body.tools ?? []).map(
      (tool) => (tool as { function: { name: string } }).function.name,
    );
    expect(names).toContain('calculator');
    expect(names).not.toContain('refund');
    // Not offered, and not run when called anyway (no approval asked either).
    expect(executed).toEqual([]);
    const messages = await env.client.messages(offered.id);
    expect(messages.find((message) => message.role === 'tool')?.content).toMatch(/not allowed/);

    server.reset();
    const named = await env.client.enqueue({
      graph: 'react-agent',
      tenant: 'acme',
      input: { query: 'refund A-1', tools: ['refund'] },
    });
    const failed = await env.client.wait(named.id, { timeoutMs: 30_000 });
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(failed.error?.message).toMatch(/'refund' is not allowed for tenant 'acme'/);
    expect(server.chatRequests()).toHaveLength(0);
  });
});
