import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import type { ScriptedChatRequest, ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';
import { eventually } from '../helpers/test-env.js';
import { docSnippet } from '../helpers/doc-pages.js';
import { parseSseFrames, type SseFrame } from '../helpers/api-sse.js';
import { STREAM_CURSOR_PATTERN } from '../../shared/contracts/stream-cursor.js';

const WAIT_MS = 1000;

function firstShownId(request: ScriptedChatRequest): string {
  const messages = request.body.messages as unknown as Message[];
  return (
    /^\[([0-9a-f]{6})\]/m.exec(messages.filter((message) => message.role === 'tool').at(-1)?.content ?? '')?.[1] ??
    'none00'
  );
}

/** `POST /v1/agent/chat`: the chat contract over HTTP, with a real worker, store and scripted model. */
describe('HTTP API: POST /v1/agent/chat', () => {
  const data = tempDirectory('agentq-chat-');
  let rag: RagTestEnv<ApiTestEnv>;
  let server: ScriptedOpenAIServer;
  let env: ApiTestEnv;

  beforeAll(async () => {
    rag = await startRagTestEnv(startApiTestEnv, data.path, {
      model: {},
      // Sources are in acme's plan, not globex's (the "allowed by plan" rule).
      env: { AGENTQ_CHAT_WAIT_MS: String(WAIT_MS), AGENTQ_CHAT_SOURCES_TENANTS: 'acme' },
    });
    ({ env } = rag);
    server = rag.server!;
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'default', tenant: 'acme' });
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris-globex', RAG_DOCS), {
      collection: 'default',
      tenant: 'globex',
    });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });
  beforeEach(() => server.reset());

  /** Search once, then answer citing the first passage shown; the first model response waits `delayMs`. */
  const scriptAnswer = (delayMs = 0) =>
    server.setScript((request, index) => {
      if (index % 2 === 0)
        return { delayMs, toolCalls: [{ name: 'search', arguments: { query: 'first sketch Eiffel Tower' } }] };
      const id = firstShownId(request);
      return {
        toolCalls: [
          { name: 'final_answer', arguments: { answer: `Maurice Koechlin drew it [${id}].`, citations: [id] } },
        ],
      };
    });

  it('"stream": true answers with Server-Sent Events: the run id, reasoning steps, the answer\'s tokens, then the answer JSON with sources', async () => {
    scriptAnswer();
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/agent/chat',
      payload: { query: 'Who drew the first sketch of the Eiffel Tower?', citations: true, stream: true },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    const frames = parseSseFrames(response.body);
    const kinds = frames.map((frame) => frame.event);
    expect(kinds[0]).toBe('run');
    expect(kinds.at(-1)).toBe('answer');
    const reasoning = frames
      .filter((frame) => frame.event === 'reasoning')
      .map((frame) => (JSON.parse(frame.data!) as { step: string }).step);
    expect(reasoning).toContain('Calling search: {"query":"first sketch Eiffel Tower"}');
    // The final_answer tool call's answer text streams as tokens, before the answer.
    const text = frames
      .filter((frame) => frame.event === 'token')
      .map((frame) => (JSON.parse(frame.data!) as { text: string }).text)
      .join('');
    expect(text).toMatch(/^Maurice Koechlin drew it \[[0-9a-f]{6}\]\.$/);
    expect(kinds.indexOf('token')).toBeLessThan(kinds.indexOf('answer'));
    const answer = JSON.parse(frames.at(-1)!.data!) as { sources: { title: string; cited: boolean }[] } & Record<
      string,
      unknown
    >;
    // Every retrieved page (sources: "all", the default), the cited one marked; the marker names its entry.
    const cited = answer.sources.findIndex((source) => source.cited);
    expect(answer).toMatchObject({ answer: `Maurice Koechlin drew it [${cited + 1}].`, search_count: 1 });
    expect(answer.sources.filter((source) => source.cited)).toEqual([
      expect.objectContaining({ title: 'Maurice Koechlin' }),
    ]);
    expect(answer.sources.length).toBeGreaterThan(1);
    const runId = (JSON.parse(frames[0]!.data!) as { run_id: string }).run_id;
    expect(answer.run_id).toBe(runId);
    const bad = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/agent/chat',
      payload: { query: 'x', stream: 'yes' },
    });
    expect(bad.statusCode).toBe(400);
  });

  it("every frame of a streamed chat has the run events stream's id, and GET …/events resumes from any of them, each token once", async () => {
    scriptAnswer();
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/agent/chat',
      payload: { query: 'Who drew the first sketch of the Eiffel Tower?', citations: true, stream: true },
    });
    const frames = parseSseFrames(response.body);
    const runId = (JSON.parse(frames[0]!.data!) as { run_id: string }).run_id;
    for (const frame of frames) expect(frame.id, frame.event).toMatch(STREAM_CURSOR_PATTERN);
    expect(frames.some((frame) => !frame.id?.includes('_'))).toBe(false);
    const textOf = (some: SseFrame[]) =>
      some
        .filter((frame) => frame.event === 'token')
        .map((frame) => (JSON.parse(frame.data!) as { text: string }).text)
        .join('');
    const whole = textOf(frames);
    expect(whole).toMatch(/^Maurice Koechlin drew it/);
    // A token frame's id ends with that token's own id.
    for (const frame of frames.filter((each) => each.event === 'token'))
      expect(frame.id!.split('_')[1]).toBe((JSON.parse(frame.data!) as { id: string }).id);
    // Cut the stream after each frame in turn; the run's event stream resumed there has the rest of the text.
    for (let cut = 0; cut < frames.length - 1; cut += 1) {
      const resumed = await env.as(KEYS.acmeProducer, {
        method: 'GET',
        url: `/v1/runs/${runId}/events`,
        headers: { 'last-event-id': frames[cut]!.id! },
      });
      const rest = parseSseFrames(resumed.body);
      expect(textOf(frames.slice(0, cut + 1)) + textOf(rest), `cut after frame ${cut}`).toBe(whole);
      expect(rest.at(-1)?.event).toBe('run-end');
    }
  });

  it("the README tour's chat request, as written, answers with its sources", async () => {
    // The body of the tour's `curl … /v1/agent/chat -d '…'` (README.md), with the query and collection of this test's documents.
    const tour = docSnippet('README.md', 'sh', 'npx agentq ingest');
    const body = JSON.parse(/\/v1\/agent\/chat[^\n]*\n\s*-d '([^']+)'/.exec(tour)![1]!) as Record<string, unknown>;
    scriptAnswer();
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/agent/chat',
      payload: { ...body, query: 'Who drew the first sketch of the Eiffel Tower?', collection: 'default' },
    });
    expect(response.statusCode).toBe(200);
    expect(json<{ sources: { cited: boolean }[] }>(response).sources.filter((source) => source.cited)).toEqual([
      expect.objectContaining({ title: 'Maurice Koechlin' }),
    ]);
  });

  it('answers 200 with the chat contract when the run finishes within AGENTQ_CHAT_WAIT_MS', async () => {
    scriptAnswer();
    const started = Date.now();
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/agent/chat',
      payload: { query: 'Who drew the first sketch of the Eiffel Tower?', citations: true, sources: 'cited' },
    });
    expect(response.statusCode).toBe(200);
    expect(Date.now() - started).toBeLessThan(WAIT_MS + 2000);
    const body = json(response);
    expect(body).toEqual({
      answer: 'Maurice Koechlin drew it [1].',
      sources: [
        {
          title: 'Maurice Koechlin',
          path: expect.stringMatching(/koechlin\.md$/),
          page: null,
          score: expect.any(Number),
          cited: true,
        },
      ],
      reasoning_steps: expect.arrayContaining(['Calling search: {"query":"first sketch Eiffel Tower"}']),
      search_count: 1,
      iterations: 1,
      model: 'scripted-chat',
      retrieval: 'lexical',
      retrieved: expect.arrayContaining([expect.objectContaining({ title: 'Maurice Koechlin' })]),
      run_id: expect.any(String),
    });
    // The run is an ordinary rag-agent run of the caller's tenant.
    const run = json(await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${String(body.run_id)}` }));
    expect(run).toMatchObject({ graph: 'rag-agent', tenant: 'acme', status: 'completed' });
    expect(
      (await env.as(KEYS.globexProducer, { method: 'GET', url: `/v1/runs/${String(body.run_id)}` })).statusCode,
    ).toBe(404);
  });

  it('a synchronous request keeps waiting past AGENTQ_CHAT_WAIT_MS and answers 200 with the chat contract', async () => {
    scriptAnswer(WAIT_MS + 1500);
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/agent/chat',
      payload: { query: 'Who drew the first sketch of the Eiffel Tower?' },
    });
    expect(response.statusCode).toBe(200);
    expect(json(response)).toMatchObject({ answer: 'Maurice Koechlin drew it.', search_count: 1 });
  });

  it('Prefer: respond-async answers 202 with the run id and Location when the wait is exceeded; the run finishes with the same contract', async () => {
    scriptAnswer(WAIT_MS + 1500);
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/agent/chat',
      headers: { prefer: 'respond-async' },
      payload: { query: 'Who drew the first sketch of the Eiffel Tower?' },
    });
    expect(response.statusCode).toBe(202);
    const run = json<{ id: string; status: string; graph: string }>(response);
    expect(response.headers.location).toBe(`/v1/runs/${run.id}`);
    expect(run.graph).toBe('rag-agent');
    expect(['queued', 'running']).toContain(run.status);
    const finished = await eventually(async () => {
      const record = json<{ status: string; output: Record<string, unknown> }>(
        await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${run.id}` }),
      );
      return record.status === 'completed' && record;
    }, 20_000);
    expect(finished.output).toMatchObject({ answer: 'Maurice Koechlin drew it.', search_count: 1, iterations: 1 });
    expect((finished.output.sources as { title: string; cited: boolean }[]).filter((source) => source.cited)).toEqual([
      expect.objectContaining({ title: 'Maurice Koechlin' }),
    ]);
  });

  it('the same Idempotency-Key returns the same run and asks the model nothing twice', async () => {
    scriptAnswer();
    const ask = () =>
      env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/agent/chat',
        headers: { 'idempotency-key': 'chat-once' },
        payload: { query: 'Who drew the first sketch of the Eiffel Tower?' },
      });
    const first = await ask();
    const second = await ask();
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(json(second).run_id).toBe(json(first).run_id);
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('sources only with citations: true; scores are relevances in 0-1; top_k sets the passages the model reads', async () => {
    scriptAnswer();
    const plain = json(
      await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/agent/chat',
        payload: { query: 'Who drew the first sketch of the Eiffel Tower?', top_k: 1 },
      }),
    );
    expect(plain).toMatchObject({ answer: 'Maurice Koechlin drew it.', sources: [] });
    const shown =
      (server.chatRequests()[1]!.body.messages as unknown as Message[])
        .filter((message) => message.role === 'tool')
        .at(-1)?.content ?? '';
    expect(shown.match(/^\[[0-9a-f]{6}\]/gm)).toHaveLength(1);

    server.reset();
    scriptAnswer();
    const cited = json<{ sources: { score: number }[] }>(
      await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/agent/chat',
        payload: { query: 'Who drew the first sketch of the Eiffel Tower?', citations: true, sources: 'cited' },
      }),
    );
    expect(cited.sources).toHaveLength(1);
    // The first passage shown (Koechlin's) holds every word of the search: a calibrated relevance of at
    // least 0.8 — not 1 for being the search's best hit, as the score relative to the best hit was.
    expect(cited.sources[0]!.score).toBeGreaterThanOrEqual(0.8);
    expect(cited.sources[0]!.score).toBeLessThan(1);
    const shownDefault =
      (server.chatRequests()[1]!.body.messages as unknown as Message[])
        .filter((message) => message.role === 'tool')
        .at(-1)?.content ?? '';
    expect(shownDefault.match(/^\[[0-9a-f]{6}\]/gm)!.length).toBeGreaterThan(1);
  });

  it('sources only for tenants whose plan includes them (AGENTQ_CHAT_SOURCES_TENANTS): no sources, no markers', async () => {
    scriptAnswer();
    const response = await env.as(KEYS.globexProducer, {
      method: 'POST',
      url: '/v1/agent/chat',
      payload: { query: 'Who drew the first sketch of the Eiffel Tower?', citations: true },
    });
    expect(response.statusCode).toBe(200);
    expect(json(response)).toMatchObject({ answer: 'Maurice Koechlin drew it.', sources: [], retrieved: [] });
    // acme's plan includes them (the tests above): [1] and one source for the same question.
  });

  it('the OpenAPI document gives both answers of POST /v1/agent/chat: 200 ChatAnswer and 202 RunRecord', async () => {
    const document = json<{
      paths: Record<
        string,
        {
          post: {
            responses: Record<
              string,
              { description: string; content: Record<string, { schema: Record<string, unknown> }> }
            >;
          };
        }
      >;
    }>(await env.as(KEYS.acmeProducer, { method: 'GET', url: '/docs/json' }));
    const responses = document.paths['/v1/agent/chat']!.post.responses;
    expect(JSON.stringify(responses['200'])).toContain('reasoning_steps');
    // Every retrieved source marked cited or not, the run's retrieved documents, and the conversation a chat continues.
    expect(JSON.stringify(responses['200'])).toMatch(/"cited".*"retrieved"/);
    const body = JSON.stringify(document.paths['/v1/agent/chat']!.post);
    expect(body).toMatch(/"conversationId"/);
    expect(body).toMatch(/"onBusy"/);
    expect(JSON.stringify(responses['202'])).toContain('stepCount');
    expect(responses['202']!.description).toMatch(/Prefer: respond-async/);
  });

  it('rejects an invalid RAG input with 400 naming the field, before any run exists', async () => {
    const cases: [unknown, RegExp][] = [
      [{ query: 'x', max_iterations: 11 }, /body\.max_iterations/],
      [{ query: '' }, /body\.query/],
      [{ collection: 'default' }, /body\.query/],
      [{ query: 'x', citations: 'yes' }, /body\.citations/],
      [{ query: 'x', collection: 'a b' }, /body\.collection/],
      [{ query: 'x', top_k: 21 }, /body\.top_k/],
      [{ query: 'x', top_k: 0 }, /body\.top_k/],
      [{ query: 'x', sources: 'some' }, /body\.sources/],
      [{ query: 'x', conversationId: 'a b' }, /body\.conversationId/],
      [{ query: 'x', conversationId: 'c1', onBusy: 'wait' }, /body\.onBusy/],
      [{ query: 'x', tenant: 'globex' }, /tenant/],
    ];
    for (const [payload, field] of cases) {
      const response = await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/agent/chat',
        payload: payload as Record<string, unknown>,
      });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(json<{ error: { code: string; message: string } }>(response).error).toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(field),
      });
    }
    expect(server.chatRequests()).toHaveLength(0);
    expect((await env.app.inject({ method: 'POST', url: '/v1/agent/chat', payload: { query: 'x' } })).statusCode).toBe(
      401,
    );
  });
});
