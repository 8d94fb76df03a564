import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import type { ScriptedChatRequest, ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];

// Windows, summarisation thresholds and memory options are tested in test/unit/memory-logic.test.ts; this
// file keeps rag-agent's conversations and summaries over a real index, worker and HTTP model.
describe('memory options', () => {
  const data = tempDirectory('agentq-memory-');
  let rag: RagTestEnv<TestEnv>;
  let server: ScriptedOpenAIServer;
  beforeAll(async () => {
    rag = await startRagTestEnv(startTestEnv, data.path, { model: {} });
    server = rag.server!;
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris' });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });
  beforeEach(() => server.reset());

  const run = async (graph: string, input: unknown, conversationId?: string) => {
    const queued = await rag.env.client.enqueue({ graph, input, ...(conversationId ? { conversationId } : {}) });
    return rag.env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('rag-agent continues a conversation: the second question comes after the first turn', async () => {
    const answer = (query: string) => (request: ScriptedChatRequest) => {
      const tool = messagesOf(request)
        .filter((message) => message.role === 'tool')
        .at(-1);
      const id = /^\[([0-9a-f]{6})\]/m.exec(tool?.content ?? '')?.[1];
      return id && messagesOf(request).at(-1)?.role === 'tool'
        ? { toolCalls: [{ name: 'final_answer', arguments: { answer: `Answer [${id}].`, citations: [id] } }] }
        : { toolCalls: [{ name: 'search', arguments: { query } }] };
    };
    server.setScript((request) => answer('Eiffel Tower sketch')(request));
    const first = await run(
      'rag-agent',
      { query: 'Who drew the first sketch of the Eiffel Tower?', collection: 'paris' },
      'rag-chat-1',
    );
    expect(first.status).toBe('completed');
    server.reset();
    server.setScript((request) => answer('Koechlin birthplace')(request));
    const second = await run('rag-agent', { query: 'Where was he born?', collection: 'paris' }, 'rag-chat-1');
    expect(second.status).toBe('completed');
    const sent = messagesOf(server.chatRequests()[0]!);
    const users = sent.filter((message) => message.role === 'user').map((message) => message.content);
    expect(users).toEqual(['Who drew the first sketch of the Eiffel Tower?', 'Where was he born?']);
    expect(sent.filter((message) => message.role === 'system')).toHaveLength(1);
  });
});

describe('summarisation in rag-agent', () => {
  const data = tempDirectory('agentq-rag-summary-');
  let rag: RagTestEnv<TestEnv>;
  let server: ScriptedOpenAIServer;
  beforeAll(async () => {
    // A tiny window: the second model turn of a run is past AGENTQ_SUMMARIZE_AT.
    rag = await startRagTestEnv(startTestEnv, data.path, {
      model: {},
      env: { AGENTQ_CONTEXT_WINDOW: '600', AGENTQ_SUMMARIZE_AT: '0.5' },
    });
    server = rag.server!;
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris' });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });

  it('a long rag-agent prompt is summarised in its own step, then the run goes on', async () => {
    server.setScript((request) => {
      const messages = messagesOf(request);
      if (messages[0]?.content?.startsWith('You summarise'))
        return { content: 'The user asked who sketched the tower; a search found Koechlin.' };
      const tool = messages.filter((message) => message.role === 'tool').at(-1);
      const id = /^\[([0-9a-f]{6})\]/m.exec(tool?.content ?? '')?.[1];
      return id && messages.at(-1)?.role === 'tool'
        ? { toolCalls: [{ name: 'final_answer', arguments: { answer: `Koechlin [${id}].`, citations: [id] } }] }
        : { toolCalls: [{ name: 'search', arguments: { query: 'Eiffel Tower first sketch Koechlin engineer' } }] };
    });
    const queued = await rag.env.client.enqueue({
      graph: 'rag-agent',
      input: { query: 'Who drew the first sketch of the Eiffel Tower?', collection: 'paris', top_k: 5 },
    });
    const done = await rag.env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    const nodes = (await rag.env.client.steps(done.id)).map((step) => step.node);
    expect(nodes).toContain('summarize');
    const afterSummary = server
      .chatRequests()
      .find(
        (request, index) =>
          index > 0 && messagesOf(server.chatRequests()[index - 1]!)[0]?.content?.startsWith('You summarise'),
      );
    expect(messagesOf(afterSummary!)[0]!.content).toContain('The user asked who sketched the tower');
  });
});
