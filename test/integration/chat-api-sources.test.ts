import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import type { ScriptedChatRequest, ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';

interface Source {
  title: string;
  path: string;
  page: number | null;
  score: number;
  cited: boolean;
}
interface Answer {
  answer: string;
  sources: Source[];
  retrieved: Omit<Source, 'cited'>[];
  run_id: string;
}

const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];

/** The id of the passage a search result shows whose text holds `word` (the scripted model cites it). */
function shownIdWith(request: ScriptedChatRequest, word: string): string {
  const shown = messagesOf(request)
    .filter((message) => message.role === 'tool')
    .at(-1)?.content;
  return new RegExp(`^\\[([0-9a-f]{6})\\][^\\n]*\\n?[^\\[]*${word}`, 'm').exec(shown ?? '')?.[1] ?? 'none00';
}

/**
 * `POST /v1/agent/chat` with every retrieved source and with a conversation: a real API, worker, store
 * and the scripted model. This worker runs with AGENTQ_RAG_SOURCES=cited, so its default is the
 * setting's and a request's `sources` overrides it.
 */
describe('HTTP API: POST /v1/agent/chat — all retrieved sources, conversations', () => {
  const data = tempDirectory('agentq-chat-sources-');
  let rag: RagTestEnv<ApiTestEnv>;
  let server: ScriptedOpenAIServer;
  let env: ApiTestEnv;

  beforeAll(async () => {
    rag = await startRagTestEnv(startApiTestEnv, data.path, {
      model: {},
      env: { AGENTQ_CHAT_SOURCES_TENANTS: 'acme', AGENTQ_RAG_SOURCES: 'cited' },
    });
    ({ env } = rag);
    server = rag.server!;
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'default', tenant: 'acme' });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });
  beforeEach(() => server.reset());

  /** Search, then answer citing the Buhl passage: not the search's best hit, so its place in sources is not 1 by chance. */
  const scriptAnswer = () =>
    server.setScript((request, index) => {
      if (index % 2 === 0)
        return { toolCalls: [{ name: 'search', arguments: { query: 'Koechlin engineer born Buhl' } }] };
      const id = shownIdWith(request, 'commune');
      return {
        toolCalls: [{ name: 'final_answer', arguments: { answer: `He was born in Buhl [${id}].`, citations: [id] } }],
      };
    });

  const chat = async (payload: Record<string, unknown>) => {
    const response = await env.as(KEYS.acmeProducer, { method: 'POST', url: '/v1/agent/chat', payload });
    expect(response.statusCode, response.body).toBe(200);
    return json<Answer>(response);
  };

  it('sources "all": every retrieved page once, best score first, the cited one marked and numbered; "cited" (here the setting\'s default) lists it alone', async () => {
    scriptAnswer();
    const all = await chat({ query: 'Where was Koechlin born?', citations: true, sources: 'all' });
    expect(all.sources.length).toBeGreaterThan(1);
    const scores = all.sources.map((source) => source.score);
    expect(scores).toEqual([...scores].sort((left, right) => right - left));
    const pages = all.sources.map((source) => `${source.path}#${source.page}`);
    expect(new Set(pages).size).toBe(pages.length);
    expect(all.sources.filter((source) => source.cited).map((source) => source.title)).toEqual(['Buhl']);
    const position = all.sources.findIndex((source) => source.cited) + 1;
    expect(position).toBeGreaterThan(1);
    expect(all.answer).toBe(`He was born in Buhl [${position}].`);
    // The run's retrieved documents come with the body: the cited one first, then by rank.
    expect(all.retrieved[0]).toMatchObject({ title: 'Buhl' });
    expect(all.retrieved.map((document) => document.path).sort()).toEqual(
      [...new Set(all.sources.map((source) => source.path))].sort(),
    );

    server.reset();
    scriptAnswer();
    const cited = await chat({ query: 'Where was Koechlin born?', citations: true });
    expect(cited.sources).toEqual([expect.objectContaining({ title: 'Buhl', cited: true })]);
    expect(cited.answer).toBe('He was born in Buhl [1].');
    expect(cited.retrieved.length).toBeGreaterThan(1);
    // The run's own output says the same.
    const run = json<{ output: { sources: Source[] } }>(
      await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${cited.run_id}` }),
    );
    expect(run.output.sources).toEqual(cited.sources);
  });

  it('conversationId continues a conversation through the chat route: the second turn’s model call holds the first turn', async () => {
    server.setScript((request) => {
      const messages = messagesOf(request);
      const question = messages.findLast((message) => message.role === 'user')?.content ?? '';
      if (messages.at(-1)?.role !== 'tool')
        return { toolCalls: [{ name: 'search', arguments: { query: question.slice(0, 60) } }] };
      const id = shownIdWith(request, '');
      return {
        toolCalls: [
          { name: 'final_answer', arguments: { answer: `Answer to "${question}" [${id}].`, citations: [id] } },
        ],
      };
    });
    const first = await chat({ query: 'Who drew the first sketch of the Eiffel Tower?', conversationId: 'chat-c1' });
    const before = server.chatRequests().length;
    const second = await chat({ query: 'Where was he born?', conversationId: 'chat-c1', onBusy: 'queue' });
    expect(second.answer).toBe('Answer to "Where was he born?".');
    const sent = messagesOf(server.chatRequests()[before]!).map((message) => `${message.role}: ${message.content}`);
    // The first turn's question and answer come before the second question.
    const asked = sent.indexOf('user: Who drew the first sketch of the Eiffel Tower?');
    expect(asked).toBeGreaterThanOrEqual(0);
    expect(sent.findIndex((line) => line.startsWith('assistant: Answer to "Who drew'))).toBeGreaterThan(asked);
    expect(sent.indexOf('user: Where was he born?')).toBeGreaterThan(asked);
    // Both runs are the conversation's turns (GET /v1/conversations/:id), the second continuing the first.
    const record = json<{ turns: { runId: string }[]; latestCompletedRunId: string }>(
      await env.as(KEYS.acmeProducer, { method: 'GET', url: '/v1/conversations/chat-c1' }),
    );
    expect(record.turns.map((turn) => turn.runId)).toEqual([first.run_id, second.run_id]);
    expect(record.latestCompletedRunId).toBe(second.run_id);
    // Another chat without the id starts afresh: its model call holds no earlier turn.
    const alone = server.chatRequests().length;
    await chat({ query: 'Where was he born?' });
    expect(messagesOf(server.chatRequests()[alone]!).filter((message) => message.role === 'user')).toHaveLength(1);
  });
});
