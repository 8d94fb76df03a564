import { describe, expect, it } from 'vitest';
import { contentText, type Message } from '../../shared/contracts/run-record.js';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { createReactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { createRagAgentGraph } from '../../worker/agents/rag/rag-agent.js';
import type { ScriptedChatRequest } from '../fakes/scripted-openai-server.js';
import { useParisRagEnv } from '../helpers/rag-fixtures.js';

const texts = (request: ScriptedChatRequest) =>
  (request.body.messages as unknown as Message[]).map((message) => contentText(message.content)).join('\n');
/** A passage's text the documents hold: in a prompt only when the passage was given to the model. */
const PASSAGE = 'Koechlin drew the first sketch of the Eiffel Tower in 1884';

/**
 * storeRetrievedContent over two turns of a conversation, through a real worker and the scripted server: the
 * default keeps retrieved passages in the stored history (the next turn's request has them); false gives them
 * to the model for its own turn only.
 */
describe('storeRetrievedContent', () => {
  const { env, server } = useParisRagEnv('agentq-store-retrieved-', {
    graphs: [
      createReactAgentGraph({ name: 'react-forgetful', storeRetrievedContent: false }),
      createRagAgentGraph({ name: 'rag-forgetful', storeRetrievedContent: false }),
    ],
  });

  const run = async (graph: string, input: unknown, conversationId: string) => {
    const queued = await env.client.enqueue({ graph, input, conversationId });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };
  const reactTurns = async (graph: string, conversationId: string) => {
    server.setScript([
      { toolCalls: [{ name: 'calculator', arguments: { expression: '1884+5' } }] },
      { content: 'Koechlin, in 1884.' },
      { content: 'He was Swiss.' },
    ]);
    const input = {
      query: 'Who drew the first sketch of the Eiffel Tower?',
      tools: ['calculator'],
      retrieve: { collection: 'paris', k: 2 },
    };
    const first = await run(graph, input, conversationId);
    const second = await run(graph, { query: 'Where was he from?', tools: [] }, conversationId);
    expect([first.status, second.status]).toEqual(['completed', 'completed']);
    return { first, requests: server.chatRequests() };
  };

  it('react-agent, default (true): the passages are stored with the question, so the next turn sends them again', async () => {
    const { first, requests } = await reactTurns('react-agent', 'keep-1');
    expect(requests.map((request) => texts(request).includes(PASSAGE))).toEqual([true, true, true]);
    expect((await env.client.messages(first.id)).map((message) => contentText(message.content)).join()).toContain(
      PASSAGE,
    );
  });

  it('react-agent, false: the model reads the passages in every call of its own turn, not in the next turn', async () => {
    const { first, requests } = await reactTurns('react-forgetful', 'forget-1');
    // Both calls of the first turn (before and after the tool) show them; the second turn's does not.
    expect(requests.map((request) => texts(request).includes(PASSAGE))).toEqual([true, true, false]);
    const history = await env.client.messages(first.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history.find((message) => message.role === 'user')?.content).toBe(
      'Who drew the first sketch of the Eiffel Tower?',
    );
    expect((first.output as { sources: unknown[] }).sources.length).toBeGreaterThan(0);
  });

  const ragTurns = async (graph: string, conversationId: string) => {
    server.setScript((request, index) => {
      if (index === 0 || index === 2)
        return {
          toolCalls: [{ name: 'search', arguments: { query: index === 0 ? 'Eiffel Tower sketch' : 'Louvre museum' } }],
        };
      const id = /^\[([0-9a-f]{6})\] Maurice Koechlin/m.exec(texts(request))?.[1] ?? 'none00';
      return {
        toolCalls: [{ name: 'final_answer', arguments: { answer: `Koechlin [${id}].`, citations: [id] } }],
      };
    });
    const first = await run(
      graph,
      { query: 'Who drew the first sketch of the Eiffel Tower?', collection: 'paris' },
      conversationId,
    );
    const second = await run(graph, { query: 'Where is the Louvre?', collection: 'paris' }, conversationId);
    expect([first.status, second.status]).toEqual(['completed', 'completed']);
    return { first, requests: server.chatRequests() };
  };

  it('rag-agent, default (true): search results are stored, so the next turn’s first request has them', async () => {
    const { requests } = await ragTurns('rag-agent', 'rag-keep-1');
    expect(requests.map((request) => texts(request).includes(PASSAGE))).toEqual([false, true, true, true]);
  });

  it('rag-agent, false: the search result reaches its turn’s answer call; the history keeps a note, the next turn has none', async () => {
    const { first, requests } = await ragTurns('rag-forgetful', 'rag-forget-1');
    expect(requests.map((request) => texts(request).includes(PASSAGE))).toEqual([false, true, false, false]);
    expect((first.output as { answer: string }).answer).toMatch(/^Koechlin/);
    const history = await env.client.messages(first.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual([
      'Passages for "Eiffel Tower sketch" were shown in the turn that searched; they are not kept in the conversation.',
      'Answer recorded.',
    ]);
  });
});
