import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { createReactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';
import { noCompetitors } from '../helpers/agent-fixtures.js';

/**
 * Input and output guardrails as checkpointed steps of react-agent, through the real openai SDK: steps and
 * events in Redis, moderation over HTTP. Each guardrail's logic is tested in test/unit/guardrails-logic.test.ts.
 */
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

  it('moderation (MODERATION_MODEL) blocks a flagged input through /v1/moderations', async () => {
    const flagged = await run({ query: 'please FLAG_ME now', guardrails: { input: ['moderation'] } });
    expect(flagged.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      details: { guardrail: 'moderation', reason: expect.stringContaining('harassment') },
    });
    expect(server.requests.filter((request) => request.path === '/v1/moderations')).toHaveLength(1);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('an unknown tool is refused before a paid input check (moderation over HTTP) runs', async () => {
    const unknownTool = await run({ query: 'q', tools: ['no_such_tool'], guardrails: { input: ['moderation'] } });
    expect(unknownTool.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining("'no_such_tool'"),
    });
    expect(server.requests.filter((request) => request.path === '/v1/moderations')).toHaveLength(0);
    expect(server.chatRequests()).toHaveLength(0);
  });
});
