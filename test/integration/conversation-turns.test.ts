import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import { createReactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import {
  startScriptedOpenAIServer,
  type ScriptedChatRequest,
  type ScriptedOpenAIServer,
  type ScriptedResponse,
} from '../fakes/scripted-openai-server.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];
const lastUser = (request: ScriptedChatRequest) =>
  [...messagesOf(request)].reverse().find((message) => message.role === 'user')?.content ?? '';

/** Answers `answer to <question>` after `delayMs`; a question containing HANG never gets an answer. */
function echoModel(delayMs: number) {
  return (request: ScriptedChatRequest): ScriptedResponse =>
    lastUser(request).includes('HANG') ? { hang: true } : { content: `answer to ${lastUser(request)}`, delayMs };
}

describe('one turn at a time per conversation (onBusy)', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    env = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' },
      graphs: [createReactAgentGraph({ name: 'react-reject', onBusy: 'reject' })],
    });
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });
  beforeEach(() => server.reset());

  const turn = (conversationId: string, query: string, extra: Record<string, unknown> = {}) =>
    env.client.enqueue({ graph: 'react-agent', input: { query, tools: [] }, conversationId, ...extra });

  it('queue (the default): two turns enqueued at once run one after the other, the second continuing the first', async () => {
    server.setScript(echoModel(400));
    const [first, second] = await Promise.all([turn('c-queue', 'Q1 my name is Ada'), turn('c-queue', 'Q2 who am I')]);
    const done = await Promise.all([first, second].map((run) => env.client.wait(run.id, { timeoutMs: 30_000 })));
    expect(done.map((run) => run.status)).toEqual(['completed', 'completed']);

    const requests = server.chatRequests();
    expect(requests).toHaveLength(2);
    // The later request started only after the earlier one was answered: never two turns at once.
    expect(requests[1]!.receivedAt).toBeGreaterThanOrEqual(requests[0]!.answeredAt!);
    // And it carries the first turn, question and answer: the history is threaded in creation order.
    const earlier = lastUser(requests[0]!);
    expect(messagesOf(requests[1]!).map((message) => message.content)).toEqual(
      expect.arrayContaining([earlier, `answer to ${earlier}`]),
    );
  });

  it('cancel: a new turn cancels the running one, which keeps its last context, and then runs', async () => {
    server.setScript(echoModel(0));
    const first = await turn('c-cancel', 'Q1 HANG think about it for ever');
    await eventually(async () => server.chatRequests().length === 1, 15_000, 'the first turn calling the model');
    const second = await turn('c-cancel', 'Q2 never mind', { onBusy: 'cancel' });
    const [firstDone, secondDone] = await Promise.all(
      [first, second].map((run) => env.client.wait(run.id, { timeoutMs: 30_000 })),
    );
    expect(firstDone?.status).toBe('cancelled');
    expect(secondDone).toMatchObject({ status: 'completed', output: { answer: 'answer to Q2 never mind' } });
    // The cancelled turn keeps what it had committed (its record and history are readable).
    expect((await env.client.messages(first.id)).length).toBeGreaterThanOrEqual(0);
    // The new turn did not continue the cancelled one (it was never answered).
    const last = server.chatRequests().at(-1)!;
    expect(JSON.stringify(messagesOf(last))).not.toContain('HANG');
    const deferred: string[] = [];
    for await (const event of env.client.events(second.id))
      if (event.type === 'step-deferred') deferred.push(String(event.data.reason));
    expect(deferred).toEqual([expect.stringContaining(`this turn cancelled ${first.id}`)]);
  });

  it('reject: a turn sent while the previous one runs fails with CONVERSATION_BUSY naming it; the running turn goes on', async () => {
    server.setScript(echoModel(0));
    const first = await turn('c-reject', 'Q1 HANG');
    await eventually(async () => server.chatRequests().length === 1, 15_000, 'the first turn calling the model');
    const second = await turn('c-reject', 'Q2', { onBusy: 'reject' });
    const refused = await env.client.wait(second.id, { timeoutMs: 15_000 });
    expect(refused).toMatchObject({
      status: 'failed',
      error: { code: 'CONVERSATION_BUSY', details: { activeRunId: first.id, conversationId: 'c-reject' } },
    });
    expect((await env.client.get(first.id))?.status).toBe('running');
    expect(server.chatRequests()).toHaveLength(1);
    await env.client.cancel(first.id);
    expect((await env.client.wait(first.id, { timeoutMs: 15_000 })).status).toBe('cancelled');
    // The conversation is free again: a next turn runs.
    const third = await turn('c-reject', 'Q3', { onBusy: 'reject' });
    expect((await env.client.wait(third.id, { timeoutMs: 15_000 })).status).toBe('completed');
  });

  it("a graph's onBusy is the default; a run's own onBusy wins", async () => {
    server.setScript(echoModel(0));
    const graphTurn = (query: string, extra: Record<string, unknown> = {}) =>
      env.client.enqueue({ graph: 'react-reject', input: { query, tools: [] }, conversationId: 'c-graph', ...extra });
    const first = await graphTurn('Q1 HANG');
    await eventually(async () => server.chatRequests().length === 1, 15_000, 'the first turn calling the model');
    const refused = await env.client.wait((await graphTurn('Q2')).id, { timeoutMs: 15_000 });
    expect(refused.error?.code).toBe('CONVERSATION_BUSY');
    const queued = await graphTurn('Q3', { onBusy: 'queue' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await env.client.get(queued.id))?.status).toBe('queued');
    await env.client.cancel(first.id);
    expect((await env.client.wait(queued.id, { timeoutMs: 15_000 })).status).toBe('completed');
  });

  it('a turn of another tenant with the same conversation id is not in the way', async () => {
    server.setScript(echoModel(0));
    const first = await turn('c-tenant', 'Q1 HANG');
    await eventually(async () => server.chatRequests().length === 1, 15_000, 'the first turn calling the model');
    const foreign = await turn('c-tenant', 'Q2', { onBusy: 'reject', tenant: 'other-tenant' });
    expect((await env.client.wait(foreign.id, { timeoutMs: 15_000 })).status).toBe('completed');
    await env.client.cancel(first.id);
  });

  it('refuses an unknown onBusy and an onBusy without a conversation, naming the field', async () => {
    await expect(turn('c-bad', 'hi', { onBusy: 'sometimes' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/onBusy: onBusy must be one of "queue", "cancel", "reject"/),
    });
    await expect(
      env.client.enqueue({ graph: 'react-agent', input: { query: 'hi' }, onBusy: 'queue' } as never),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/onBusy: .*conversationId/) });
  });
});
