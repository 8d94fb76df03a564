import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { RagOutput } from '../../shared/retrieval/rag-output.js';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import { RAG_FINAL_ANSWER_REQUEST } from '../../worker/agents/rag/rag-prompts.js';
import type { ScriptedChatRequest, ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import {
  FOREIGN_DOC,
  ingestFolder,
  RAG_DOCS,
  startRagTestEnv,
  writeDocs,
  type RagTestEnv,
} from '../helpers/rag-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';

/** The passage ids the model was shown in the last tool message of a request, in order. */
function shownIds(request: ScriptedChatRequest): string[] {
  const messages = request.body.messages as unknown as Message[];
  const last = messages.filter((message) => message.role === 'tool').at(-1)?.content ?? '';
  return [...last.matchAll(/^\[([0-9a-f]{6})\] (.*)$/gm)].map((match) => match[1]!);
}

function toolNames(request: ScriptedChatRequest): string[] {
  return (request.body.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
}

/** rag-agent with a model: client → queue → worker → real openai SDK → scripted server; searches on the real store. */
describe('rag-agent with a language model', () => {
  const data = tempDirectory('agentq-rag-');
  let rag: RagTestEnv<TestEnv>;
  let server: ScriptedOpenAIServer;
  let env: TestEnv;

  beforeAll(async () => {
    rag = await startRagTestEnv(startTestEnv, data.path, { model: {} });
    ({ env } = rag);
    server = rag.server!;
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris' });
    await ingestFolder(rag.ingest, writeDocs(data.path, 'foreign', FOREIGN_DOC), {
      collection: 'paris',
      tenant: 'globex',
    });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });
  beforeEach(() => server.reset());

  // What the answer cites is what these tests check: sources lists only that (`all` is the chat API tests').
  const run = async (input: Record<string, unknown>, tenant?: string) => {
    const queued = await env.client.enqueue({
      graph: 'rag-agent',
      input: { sources: 'cited', ...input },
      ...(tenant ? { tenant } : {}),
    });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('search → refine_and_search → final_answer: each search a step; the invented citation is dropped and noted', async () => {
    server.setScript((request, index) => {
      if (index === 0) return { toolCalls: [{ name: 'search', arguments: { query: 'Eiffel Tower designer' } }] };
      if (index === 1)
        return {
          toolCalls: [
            {
              name: 'refine_and_search',
              arguments: { refined_query: 'Koechlin sketch chief engineer', reason: 'no designer named' },
            },
          ],
        };
      const koechlin = shownIds(request)[0] ?? 'none00';
      return {
        toolCalls: [
          {
            name: 'final_answer',
            arguments: {
              answer: `Maurice Koechlin drew the first sketch [${koechlin}], per the archives [abc123].`,
              citations: [koechlin, 'abc123'],
            },
          },
        ],
      };
    });
    const done = await run({ query: 'Who drew the first sketch of the Eiffel Tower?', collection: 'paris' });
    expect(done.status).toBe('completed');
    const output = done.output as RagOutput;
    expect(output.answer).toBe('Maurice Koechlin drew the first sketch, per the archives.');
    expect(output.sources).toEqual([
      {
        title: 'Maurice Koechlin',
        path: expect.stringMatching(/koechlin\.md$/),
        page: null,
        score: expect.any(Number),
        cited: true,
      },
    ]);
    expect(output.reasoning_steps).toContain(
      'Dropped citation [abc123]: no passage with that id was retrieved in this run',
    );
    expect(output.reasoning_steps.slice(0, 5)).toEqual([
      'Calling search: {"query":"Eiffel Tower designer"}',
      // The query names a document's title: the search says it boosted that document.
      expect.stringMatching(/^search: the query names "eiffel tower": boosted that document \("Eiffel Tower"\)$/),
      expect.stringMatching(/^search found \d+ passages?, best: "Eiffel Tower"$/),
      'Calling refine_and_search: {"refined_query":"Koechlin sketch chief engineer"}',
      expect.stringMatching(/^refine_and_search found \d+ passages?, best: "Maurice Koechlin"$/),
    ]);
    expect(output).toMatchObject({ search_count: 2, iterations: 2, model: 'scripted-chat', retrieval: 'lexical' });
    expect(output.retrieved.map((document) => document.title)).toContain('Eiffel Tower');

    const steps = await env.client.steps(done.id);
    expect(steps.map((step) => step.node)).toEqual(['model', 'search', 'model', 'search', 'model']);
    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    // The answer closes the history as text, its citations checked (the invented one dropped), markers kept.
    expect(history.at(-1)).toEqual({
      role: 'assistant',
      content: expect.stringMatching(/^Maurice Koechlin drew the first sketch \[[0-9a-f]{6}\], per the archives\.$/),
    });
    // The first request offers the reference design's three tools.
    expect(toolNames(server.chatRequests()[0]!)).toEqual(['search', 'refine_and_search', 'final_answer']);
    const events = await env.client.store.eventLog.events(done.id);
    expect(events.filter((event) => event.type === 'tool-call').map((event) => event.data.tool)).toEqual([
      'search',
      'refine_and_search',
    ]);
    expect(events.filter((event) => event.type === 'tool-result')).toHaveLength(2);
    // A single search runs in its model turn's job (an inline step): no job of its own, its events
    // between its own step-start and step-end.
    const queue = env.queue(STEP_QUEUE, done.id);
    const jobs = await Promise.all([0, 1, 2, 3, 4].map((superstep) => queue.getJob(`${done.id}.s${superstep}.t0`)));
    expect(jobs.map((job) => Boolean(job))).toEqual([true, false, true, false, true]);
    expect(events.filter((event) => event.data.superstep === 1).map((event) => event.type)).toEqual([
      'step-start',
      'tool-call',
      'tool-result',
      'step-end',
    ]);
    // Another tenant's document never reaches this run.
    expect(JSON.stringify(history)).not.toMatch(/Zebulon|secret-tower/);
  });

  it('citations: true numbers the sources in the answer; parallel searches run as one superstep; a plain-text answer is checked too', async () => {
    let ids: string[] = [];
    server.setScript((request, index) => {
      if (index === 0) {
        return {
          toolCalls: [
            { name: 'search', arguments: { query: 'Louvre museum' } },
            { name: 'search', arguments: { query: 'Notre-Dame spire fire' } },
          ],
        };
      }
      const messages = request.body.messages as unknown as Message[];
      ids = messages
        .filter((message) => message.role === 'tool')
        .map((message) => /^\[([0-9a-f]{6})\]/m.exec(message.content ?? '')![1]!);
      return {
        content: `The Louvre is a museum [${ids[0]}] and Notre-Dame lost its spire in 2019 [${ids[1]}] [zzz999].`,
      };
    });
    const done = await run({
      query: 'What happened to Notre-Dame, and what is the Louvre?',
      collection: 'paris',
      citations: true,
    });
    const output = done.output as RagOutput;
    expect(output.answer).toBe('The Louvre is a museum [1] and Notre-Dame lost its spire in 2019 [2].');
    expect(output.sources.map((source) => source.title)).toEqual(['Louvre', 'Notre-Dame de Paris']);
    expect(output.reasoning_steps).toContain(
      'Dropped citation [zzz999]: no passage with that id was retrieved in this run',
    );
    expect(output).toMatchObject({ search_count: 2, iterations: 1 });
    const steps = await env.client.steps(done.id);
    const searches = steps.filter((step) => step.node === 'search');
    expect(searches).toHaveLength(2);
    expect(new Set(searches.map((step) => step.superstep))).toEqual(new Set([1]));
    expect(validateHistory(await env.client.messages(done.id))).toEqual([]);
  });

  it('max_iterations bounds the search rounds: then only final_answer is offered', async () => {
    server.setScript((request, index) => {
      if (index === 0) return { toolCalls: [{ name: 'search', arguments: { query: 'Eiffel Tower' } }] };
      const [first] = shownIds(request);
      return {
        toolCalls: [
          { name: 'final_answer', arguments: { answer: `It was completed in 1889 [${first}].`, citations: [first] } },
        ],
      };
    });
    const done = await run({ query: 'When was the Eiffel Tower completed?', collection: 'paris', max_iterations: 1 });
    expect(done.output).toMatchObject({
      answer: 'It was completed in 1889.',
      iterations: 1,
      search_count: 1,
      sources: [{ title: 'Eiffel Tower' }],
    });
    const [, last] = server.chatRequests();
    expect(toolNames(last!)).toEqual(['final_answer']);
    expect((last!.body.messages as unknown as Message[]).at(-1)).toEqual({
      role: 'user',
      content: RAG_FINAL_ANSWER_REQUEST,
    });
  });

  it('the run’s tenant scopes every search: another tenant sees only its own documents', async () => {
    server.setScript((request, index) => {
      if (index === 0) return { toolCalls: [{ name: 'search', arguments: { query: 'Eiffel tower sketch engineer' } }] };
      const ids = shownIds(request);
      return {
        toolCalls: [{ name: 'final_answer', arguments: { answer: `Zebulon Quill [${ids[0]}].`, citations: ids } }],
      };
    });
    const done = await run({ query: 'Who drew the tower plans?', collection: 'paris' }, 'globex');
    const output = done.output as RagOutput;
    expect(output.retrieved.map((document) => document.title)).toEqual(['Secret tower']);
    expect(output.sources.map((source) => source.title)).toEqual(['Secret tower']);
  });

  it('an invalid input fails the run once, with the field named, and calls no model (I5)', async () => {
    server.setScript([{ content: 'never' }]);
    const done = await run({ query: 'x', max_iterations: 0 });
    expect(done.status).toBe('failed');
    expect(done.error?.message).toMatch(/max_iterations/);
    expect(server.chatRequests()).toHaveLength(0);
  });
});
