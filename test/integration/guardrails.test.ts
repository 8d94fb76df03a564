import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { defineGuardrail } from '../../worker/agents/guardrails/define-guardrail.js';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { defineTool } from '../../shared/ports/define-tool.js';
import { createReactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';

const noCompetitors = defineGuardrail({
  name: 'no_competitors',
  description: 'Answers never name Acme',
  stages: ['output'],
  check: (text) =>
    /acme/i.test(text) ? { action: 'reprompt', reason: 'Do not name competitors.' } : { action: 'pass' },
});

const customerRecord = defineTool({
  name: 'customer_record',
  description: "A customer's contact; its result is the answer",
  input: z.object({ customer: z.string() }),
  returnDirect: true,
  execute: ({ customer }) =>
    customer === 'rival' ? 'Switch to Acme.' : `${customer} can be reached at ada@example.com.`,
});

/** Input and output guardrails as checkpointed steps of react-agent, through the real openai SDK. */
describe('guardrails', () => {
  const { server, env } = useAgentE2E({
    env: {
      OPENAI_API_KEY: 'test-key',
      MODERATION_MODEL: 'omni-moderation-latest',
    },
    graphs: [
      createReactAgentGraph({
        name: 'guarded-agent',
        guardrails: { input: ['pii_redaction'], output: ['pii_redaction', 'no_competitors'] },
      }),
    ],
    services: { guardrails: [noCompetitors] },
    tools: [customerRecord],
  });

  const run = async (input: Record<string, unknown>, graph = 'react-agent') => {
    const queued = await env.client.enqueue({ graph, input: { tools: [], ...input } });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };
  const eventsOf = async (runId: string, prefix = 'guardrail-') =>
    (await env.client.store.eventLog.events(runId))
      .filter((event) => event.type.startsWith(prefix))
      .map((event) => ({ type: event.type, ...event.data }));
  const userMessagesSent = (index: number) =>
    (server.chatRequests()[index]!.body.messages as unknown as Message[])
      .filter((message) => message.role === 'user')
      .map((message) => message.content);

  it('an input guardrail that blocks fails the run with GUARDRAIL_BLOCKED before any model call', async () => {
    const done = await run({
      query: 'x'.repeat(50),
      guardrails: { input: [{ name: 'max_input_length', options: { maxChars: 20 } }] },
    });
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      node: 'input_guard',
      message: expect.stringContaining("guardrail 'max_input_length' blocked the input"),
      details: { guardrail: 'max_input_length', stage: 'input', reason: expect.stringContaining('at most 20') },
    });
    expect(server.chatRequests()).toHaveLength(0);
    expect(await eventsOf(done.id)).toEqual([
      expect.objectContaining({ type: 'guardrail-block', guardrail: 'max_input_length', stage: 'input' }),
    ]);
  });

  it("a graph's guardrails redact PII from the input before the model sees it and from the answer before the history keeps it", async () => {
    server.setScript([{ content: 'I emailed bob@example.com and charged 4111 1111 1111 1111.' }]);
    const done = await run({ query: 'My email is ada@example.com, please help.' }, 'guarded-agent');
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: 'I emailed [EMAIL] and charged [CARD_NUMBER].' },
    });
    expect(userMessagesSent(0)).toEqual(['My email is [EMAIL], please help.']);
    const history = await env.client.messages(done.id);
    expect(JSON.stringify(history)).not.toMatch(/@example\.com|4111/);
    expect(validateHistory(history)).toEqual([]);
    expect((await env.client.steps(done.id)).map((step) => step.node)).toEqual([
      'input_guard',
      'model',
      'output_guard',
    ]);
    expect(await eventsOf(done.id)).toEqual([
      expect.objectContaining({ type: 'guardrail-pass', guardrail: 'pii_redaction', stage: 'input', rewritten: true }),
      expect.objectContaining({ type: 'guardrail-pass', guardrail: 'pii_redaction', stage: 'output', rewritten: true }),
      expect.objectContaining({ type: 'guardrail-pass', guardrail: 'no_competitors', stage: 'output' }),
    ]);
  });

  it('a run overrides the graph: input guardrails off; a custom output guardrail reprompts the model with the violation', async () => {
    server.setScript([{ content: 'Try Acme instead.' }, { content: 'Our product does that.' }]);
    const done = await run(
      { query: 'ada@example.com: what should I buy?', guardrails: { input: [] } },
      'guarded-agent',
    );
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Our product does that.' } });
    expect(userMessagesSent(0)).toEqual(['ada@example.com: what should I buy?']);
    expect(userMessagesSent(1)).toEqual([
      'ada@example.com: what should I buy?',
      "Your answer was rejected by the guardrail 'no_competitors': Do not name competitors.",
    ]);
    expect(await eventsOf(done.id, 'guardrail-retry')).toEqual([
      expect.objectContaining({ guardrail: 'no_competitors', stage: 'output', reprompt: 1 }),
    ]);
    expect(validateHistory(await env.client.messages(done.id))).toEqual([]);
  });

  it('json_schema reprompts an answer that is not the schema, and blocks after maxReprompts', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    server.setScript([{ content: 'Paris' }, { content: '```json\n{"city": "Paris"}\n```' }]);
    const fixed = await run({
      query: 'capital of France as JSON',
      guardrails: { output: [{ name: 'json_schema', options: { schema } }] },
    });
    expect(fixed).toMatchObject({ status: 'completed', output: { answer: '```json\n{"city": "Paris"}\n```' } });
    expect(server.chatRequests()).toHaveLength(2);

    server.reset();
    server.setScript([{ content: 'Paris' }, { content: '{"town": "Paris"}' }, { content: 'never asked' }]);
    const failed = await run({
      query: 'capital of France as JSON',
      guardrails: { output: [{ name: 'json_schema', options: { schema } }], maxReprompts: 1 },
    });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      details: { guardrail: 'json_schema', stage: 'output', reason: expect.stringContaining('after 1 reprompt') },
    });
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('deny_list blocks an answer; moderation (MODERATION_MODEL) blocks a flagged input through /v1/moderations', async () => {
    server.setScript([{ content: 'The secret code is 1234.' }]);
    const denied = await run({
      query: 'tell me',
      guardrails: { output: [{ name: 'deny_list', options: { keywords: ['secret code'] } }] },
    });
    expect(denied.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      details: { guardrail: 'deny_list', stage: 'output' },
    });

    server.reset();
    const flagged = await run({ query: 'please FLAG_ME now', guardrails: { input: ['moderation'] } });
    expect(flagged.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      details: { guardrail: 'moderation', reason: expect.stringContaining('harassment') },
    });
    expect(server.requests.filter((request) => request.path === '/v1/moderations')).toHaveLength(1);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('an unknown guardrail or bad options fail the run naming the field, with zero model calls', async () => {
    const unknown = await run({ query: 'q', guardrails: { output: ['pii_redaction', 'no_such_guardrail'] } });
    expect(unknown.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(
        /^guardrails\.output\[1\]: unknown guardrail 'no_such_guardrail'; this worker has: .*pii_redaction/,
      ),
    });
    const badOptions = await run({
      query: 'q',
      guardrails: { input: [{ name: 'deny_list', options: { patterns: ['(unclosed'] } }] },
    });
    expect(badOptions.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('guardrails.input[0].options'),
    });
    const badShape = await run({ query: 'q', guardrails: { output: [{ name: 'pii_redaction', extra: 1 }] } });
    expect(badShape.error).toMatchObject({ code: 'INVALID_INPUT' });
    // An unknown tool is refused before a paid input check (moderation) runs.
    const unknownTool = await run({ query: 'q', tools: ['no_such_tool'], guardrails: { input: ['moderation'] } });
    expect(unknownTool.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining("'no_such_tool'"),
    });
    expect(server.requests.filter((request) => request.path === '/v1/moderations')).toHaveLength(0);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it("a returnDirect tool's result passes the output guardrails: redacted as the answer, a reprompt sends the model back", async () => {
    server.setScript([
      { toolCalls: [{ name: 'customer_record', arguments: { customer: 'Ada' } }] },
      { content: 'never asked' },
    ]);
    const redacted = await run({ query: 'contact for Ada?', tools: ['customer_record'] }, 'guarded-agent');
    expect(redacted).toMatchObject({ status: 'completed', output: { answer: 'Ada can be reached at [EMAIL].' } });
    expect(server.chatRequests()).toHaveLength(1);
    expect((await env.client.steps(redacted.id)).map((step) => step.node)).toEqual([
      'input_guard',
      'model',
      'tool',
      'output_guard',
    ]);

    server.reset();
    server.setScript([
      { toolCalls: [{ name: 'customer_record', arguments: { customer: 'rival' } }] },
      { content: 'We can help you ourselves.' },
    ]);
    const reprompted = await run({ query: 'who else?', tools: ['customer_record'] }, 'guarded-agent');
    expect(reprompted).toMatchObject({ status: 'completed', output: { answer: 'We can help you ourselves.' } });
    expect(userMessagesSent(1)).toEqual([
      'who else?',
      "The tool's result was rejected as the answer by the guardrail 'no_competitors': Do not name competitors.",
    ]);
    expect(validateHistory(await env.client.messages(reprompted.id))).toEqual([]);

    server.reset();
    server.setScript([
      { toolCalls: [{ name: 'customer_record', arguments: { customer: 'rival' } }] },
      { content: 'never asked' },
    ]);
    const blockedRun = await run(
      { query: 'who else?', tools: ['customer_record'], guardrails: { output: ['no_competitors'], maxReprompts: 0 } },
      'guarded-agent',
    );
    expect(blockedRun.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      details: { guardrail: 'no_competitors', stage: 'output', reason: expect.stringContaining('returnDirect') },
    });
    expect(server.chatRequests()).toHaveLength(1);
  });
});
