import { describe, expect, it } from 'vitest';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import { createReactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { ConversationTurns } from '../../shared/store/conversation-turns.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { type ScriptedChatRequest, type ScriptedResponse } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';
import { eventually } from '../helpers/test-env.js';

const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];
const lastUser = (request: ScriptedChatRequest) =>
  [...messagesOf(request)].reverse().find((message) => message.role === 'user')?.content ?? '';

/**
 * Answers `answer to <question>` after `delayMs`; a question containing HANG never gets an answer, and one
 * containing TOOL-HANG first calls the calculator and then hangs (so its run has committed steps).
 */
function echoModel(delayMs: number) {
  return (request: ScriptedChatRequest): ScriptedResponse => {
    const question = lastUser(request);
    const toolDone = messagesOf(request).some((message) => message.role === 'tool');
    if (question.includes('TOOL-HANG') && !toolDone)
      return { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] };
    return question.includes('HANG') ? { hang: true } : { content: `answer to ${question}`, delayMs };
  };
}

describe('one turn at a time per conversation (onBusy)', () => {
  const { server, env } = useAgentE2E({
    graphs: [createReactAgentGraph({ name: 'react-reject', onBusy: 'reject' })],
  });

  const turn = (conversationId: string, query: string, extra: Record<string, unknown> = {}, tools: string[] = []) =>
    env.client.enqueue({ graph: 'react-agent', input: { query, tools }, conversationId, ...extra });

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

  it('turns enqueued at once on two workers run one at a time, in creation order, each continuing the last', async () => {
    server.setScript(echoModel(150));
    const second = await startWorker({ config: env.config, logger: createLogger('silent'), reconciler: false });
    try {
      const queued = await Promise.all(['A', 'B', 'C', 'D'].map((name) => turn('c-race', `Q-${name}`)));
      const done = await Promise.all(queued.map((run) => env.client.wait(run.id, { timeoutMs: 30_000 })));
      expect(done.map((run) => run.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
      const requests = server.chatRequests();
      expect(requests).toHaveLength(4);
      for (let index = 1; index < requests.length; index += 1) {
        // Never two turns at once, and each later turn's prompt holds every earlier answer.
        expect(requests[index]!.receivedAt).toBeGreaterThanOrEqual(requests[index - 1]!.answeredAt!);
        const contents = messagesOf(requests[index]!).map((message) => message.content);
        for (const earlier of requests.slice(0, index)) expect(contents).toContain(`answer to ${lastUser(earlier)}`);
      }
      // Creation order: the turns ran in the order their runs were created.
      const byCreation = [...done].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
      expect(requests.map(lastUser)).toEqual(
        byCreation.map((run) => (run.output as { answer: string }).answer.replace('answer to ', '')),
      );
    } finally {
      await second.close();
    }
  });

  it('the turn order is one atomic decision: of many turns asking at once, exactly one is first', async () => {
    const turns = new ConversationTurns(env.worker.store.redis, env.worker.store.keys, 60);
    const asks = Array.from({ length: 20 }, (_, index) => ({
      id: `race-${index}`,
      tenant: 'default',
      conversationId: 'c-atomic',
      createdAt: 1000 + (index % 3),
    }));
    const ahead = await Promise.all(asks.map((ask) => turns.ahead(ask)));
    expect(ahead.filter((list) => list.length === 0)).toHaveLength(1);
    // The first to leave hands the conversation to exactly the next one; leaving twice hands nothing.
    const first = asks[ahead.findIndex((list) => list.length === 0)]!;
    const next = await turns.leave('default', 'c-atomic', first.id);
    expect(next).not.toBeNull();
    expect(await turns.leave('default', 'c-atomic', first.id)).toBeNull();
    expect(await turns.ahead(asks.find((ask) => ask.id === next)!)).toEqual([]);
  });

  it('a turn ahead whose run ended or is gone (a hand-on lost in a crash) does not block the conversation', async () => {
    server.setScript(echoModel(0));
    const { redis, keys } = env.worker.store;
    const finished = await turn('c-stale', 'Q1');
    expect((await env.client.wait(finished.id, { timeoutMs: 15_000 })).status).toBe('completed');
    // As if its run-finished hook never ran, and as if a run vanished long ago while listed.
    const key = keys.conversationTurns('default', 'c-stale');
    await redis.zadd(key, Date.parse(finished.createdAt), finished.id);
    await redis.zadd(key, Date.now() - 120_000, 'run-long-gone');
    const next = await turn('c-stale', 'Q2', { onBusy: 'reject' });
    expect((await env.client.wait(next.id, { timeoutMs: 15_000 })).status).toBe('completed');
    expect(await redis.zrange(key, '0', '-1')).toEqual([]);
  });

  it('cancel: a new turn cancels the running one, which keeps its last context, and then runs', async () => {
    server.setScript(echoModel(0));
    const first = await turn('c-cancel', 'Q1 TOOL-HANG think about it for ever', {}, ['calculator']);
    await eventually(async () => server.chatRequests().length === 2, 15_000, 'the first turn calling the model again');
    const second = await turn('c-cancel', 'Q2 never mind', { onBusy: 'cancel' });
    const [firstDone, secondDone] = await Promise.all(
      [first, second].map((run) => env.client.wait(run.id, { timeoutMs: 30_000 })),
    );
    expect(firstDone?.status).toBe('cancelled');
    expect(secondDone).toMatchObject({ status: 'completed', output: { answer: 'answer to Q2 never mind' } });
    // The cancelled turn keeps what it had committed: its question, the tool call and the tool's result.
    const kept = await env.client.messages(first.id);
    expect(kept.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(kept[1]!.content).toBe('Q1 TOOL-HANG think about it for ever');
    // The new turn did not continue the cancelled one (it was never answered).
    const last = server.chatRequests().at(-1)!;
    expect(JSON.stringify(messagesOf(last))).not.toContain('HANG');
    const deferred: string[] = [];
    for await (const event of env.client.events(second.id))
      if (event.type === 'step-deferred') deferred.push(String(event.data.reason));
    expect(deferred).toEqual([expect.stringContaining(`this turn cancelled ${first.id}`)]);
  });

  it('interrupt: a new turn stops the running one and continues from what it committed, its own input appended', async () => {
    server.setScript(echoModel(0));
    const first = await turn('c-interrupt', 'Q1 TOOL-HANG think about it for ever', {}, ['calculator']);
    await eventually(async () => server.chatRequests().length === 2, 15_000, 'the first turn calling the model again');
    const second = await turn('c-interrupt', 'Q2 actually, add 2', { onBusy: 'interrupt' });
    const [firstDone, secondDone] = await Promise.all(
      [first, second].map((run) => env.client.wait(run.id, { timeoutMs: 30_000 })),
    );
    expect(firstDone?.status).toBe('cancelled');
    expect(secondDone).toMatchObject({ status: 'completed', output: { answer: 'answer to Q2 actually, add 2' } });
    // The new turn's prompt holds the interrupted turn's question, its tool call and result, then its own.
    const sent = messagesOf(server.chatRequests().at(-1)!);
    expect(sent.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(sent[1]!.content).toBe('Q1 TOOL-HANG think about it for ever');
    expect(sent[4]!.content).toBe('Q2 actually, add 2');
    const deferred: string[] = [];
    for await (const event of env.client.events(second.id))
      if (event.type === 'step-deferred') deferred.push(String(event.data.reason));
    expect(deferred).toEqual([expect.stringContaining(`this turn interrupted ${first.id}`)]);
  });

  it('rollback: a new turn cancels the running one and drops it from the conversation, as if it never ran', async () => {
    server.setScript(echoModel(0));
    const first = await turn('c-rollback', 'Q1 HANG');
    await eventually(async () => server.chatRequests().length === 1, 15_000, 'the first turn calling the model');
    const second = await turn('c-rollback', 'Q2 start over', { onBusy: 'rollback' });
    expect((await env.client.wait(second.id, { timeoutMs: 30_000 })).status).toBe('completed');
    expect((await env.client.wait(first.id, { timeoutMs: 30_000 })).status).toBe('cancelled');
    const third = await turn('c-rollback', 'Q3 and then');
    expect((await env.client.wait(third.id, { timeoutMs: 30_000 })).status).toBe('completed');
    const sent = JSON.stringify(messagesOf(server.chatRequests().at(-1)!));
    expect(sent).toContain('Q2 start over');
    expect(sent).not.toContain('Q1 HANG');
    const { redis, keys } = env.worker.store;
    expect(await redis.zrange(keys.conversation('default', 'c-rollback'), '0', '-1')).toEqual([second.id, third.id]);
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
      message: expect.stringMatching(
        /onBusy: onBusy must be one of "queue", "cancel", "reject", "interrupt", "rollback"/,
      ),
    });
    await expect(
      env.client.enqueue({ graph: 'react-agent', input: { query: 'hi' }, onBusy: 'queue' } as never),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/onBusy: .*conversationId/) });
  });
});
