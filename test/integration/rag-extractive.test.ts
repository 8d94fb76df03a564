import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestClient } from '../../producer/client/ingest-client.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { toChunkRecords } from '../../shared/retrieval/chunk-records.js';
import type { Embedder } from '../../shared/ports/embedder.js';
import type { VectorStore } from '../../shared/ports/vector-store.js';
import type { RagOutput } from '../../shared/retrieval/rag-output.js';
import { embedText, startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import {
  embeddedStoreOf,
  ingestFolder,
  RAG_DOCS,
  startRagTestEnv,
  writeDocs,
  type RagTestEnv,
} from '../helpers/rag-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** rag-agent without a language model (LLM_MODEL unset): the extractive answerer, end to end through the queue. */
describe('rag-agent offline: the extractive answerer', () => {
  const data = tempDirectory('agentq-rag-extractive-');
  let rag: RagTestEnv<TestEnv>;
  let env: TestEnv;
  let ingest: IngestClient;

  beforeAll(async () => {
    rag = await startRagTestEnv(startTestEnv, data.path);
    ({ env, ingest } = rag);
    await ingestFolder(ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris' });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });

  // What the answer cites is what these tests check: sources lists only that (`all` is the chat API tests').
  const ask = async (input: Record<string, unknown>) => {
    const queued = await env.client.enqueue({
      graph: 'rag-agent',
      input: { collection: 'paris', sources: 'cited', ...input },
    });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    return { output: done.output as RagOutput, steps: (await env.client.steps(done.id)).map((step) => step.node) };
  };

  it('answers with the sentence that says it, citing the document it came from', async () => {
    const { output, steps } = await ask({ query: 'Who drew the first sketch of the Eiffel Tower?', citations: true });
    expect(output.answer).toBe(
      'As chief engineer of the company of Gustave Eiffel, Koechlin drew the first sketch of the Eiffel Tower in 1884. [1]',
    );
    expect(output.sources).toEqual([
      {
        title: 'Maurice Koechlin',
        path: expect.stringMatching(/paris\/koechlin\.md$/),
        page: null,
        score: expect.any(Number),
        cited: true,
      },
    ]);
    expect(output).toMatchObject({ model: 'extractive', retrieval: 'lexical', search_count: 1, iterations: 1 });
    expect(output.retrieved[0]!.title).toBe('Maurice Koechlin');
    expect(steps).toEqual(['model', 'search', 'model']);
    expect(output.reasoning_steps[0]).toBe(
      'Calling search: {"query":"Who drew the first sketch of the Eiffel Tower?"}',
    );
  });

  it('weak first results → one refinement (its own search step) with the names the passages mention; the answer follows the link', async () => {
    const { output, steps } = await ask({
      query:
        'In which department of France is the town where the engineer who drew the first sketch of the Eiffel Tower was born?',
    });
    expect(steps).toEqual(['model', 'search', 'model', 'search', 'model']);
    expect(output.reasoning_steps.some((step) => step.startsWith('Weak results:'))).toBe(true);
    expect(output.reasoning_steps.find((step) => step.startsWith('Calling refine_and_search:'))).toMatch(/Buhl/);
    expect(output.sources.map((source) => source.title)).toEqual(['Maurice Koechlin', 'Buhl']);
    expect(output.answer).toContain('Buhl is a commune in the Haut-Rhin department');
    expect(output).toMatchObject({ search_count: 2, iterations: 2 });
  });

  it('max_iterations 1 allows no refinement; a collection with nothing matching gets an answer that says so', async () => {
    const { output, steps } = await ask({
      query:
        'In which department of France is the town where the engineer who drew the first sketch of the Eiffel Tower was born?',
      max_iterations: 1,
    });
    expect(steps).toEqual(['model', 'search', 'model']);
    expect(output.reasoning_steps.some((step) => /max_iterations \(1\) allows no refinement/.test(step))).toBe(true);
    const empty = await ask({ query: 'Who drew the tower?', collection: 'nothing-here' });
    expect(empty.output).toMatchObject({
      answer: "No passage in collection 'nothing-here' matches the question.",
      sources: [],
      retrieved: [],
      search_count: 1,
    });
    expect(empty.steps).toEqual(['model', 'search', 'model']);
  });
});

/** With an embedding model, searches of a collection that holds vectors fuse lexical and dense ranks. */
describe('rag-agent retrieval mode', () => {
  const data = tempDirectory('agentq-rag-hybrid-');
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let store: VectorStore;

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ embeddingDimensions: 64 });
    store = embeddedStoreOf(data.path);
    env = await startTestEnv({
      env: {
        AGENTQ_DATA_DIR: data.path,
        OPENAI_BASE_URL: server.url,
        OPENAI_API_KEY: 'test-key',
        EMBED_MODEL: 'scripted-embedding',
      },
      services: { vectorStore: store },
    });
    // Chunks written with vectors, as ingestion does when it embeds.
    for (const [file, text] of Object.entries(RAG_DOCS)) {
      const title = /^# (.*)$/m.exec(text)![1]!;
      const body = text.replace(/^# .*\n+/, '').trim();
      const document = {
        docId: `doc_${file.replace(/\W/g, '_')}`,
        title,
        path: `vectors/${file}`,
        type: 'markdown' as const,
        contentHash: 'h',
      };
      const chunks = [{ index: 0, text: body, page: null, headingPath: [title], charStart: 0, charEnd: body.length }];
      await store.upsert('default', 'with-vectors', toChunkRecords(chunks, document, [embedText(body, 64)]));
      await store.upsert('default', 'lexical-only', toChunkRecords(chunks, document));
    }
  });
  afterAll(async () => {
    await env.close();
    await store.close();
    await server.close();
    data.remove();
  });

  const ask = async (collection: string, query = 'Who drew the first sketch of the Eiffel Tower?') => {
    const queued = await env.client.enqueue({ graph: 'rag-agent', input: { query, collection, sources: 'cited' } });
    return (await env.client.wait(queued.id, { timeoutMs: 30_000 })).output as RagOutput;
  };

  it('is hybrid (the query embedded, usage recorded) where the collection has vectors, lexical where it has none', async () => {
    const hybrid = await ask('with-vectors');
    expect(hybrid).toMatchObject({
      retrieval: 'hybrid',
      model: 'extractive',
      sources: [{ title: 'Maurice Koechlin' }],
    });
    expect(server.embeddingRequests().length).toBe(hybrid.search_count);
    const before = server.embeddingRequests().length;
    const lexical = await ask('lexical-only');
    expect(lexical).toMatchObject({ retrieval: 'lexical', sources: [{ title: 'Maurice Koechlin' }] });
    expect(server.embeddingRequests().length).toBe(before);
  });

  it("embeds the question, not the extractive answerer's refined query (key words and names, no sentence to embed)", async () => {
    const before = server.embeddingRequests().length;
    const output = await ask(
      'with-vectors',
      'In which department of France is the town where the engineer who drew the first sketch of the Eiffel Tower was born?',
    );
    expect(output).toMatchObject({ retrieval: 'hybrid', search_count: 2 });
    expect(output.reasoning_steps.some((step) => step.startsWith('Calling refine_and_search:'))).toBe(true);
    expect(server.embeddingRequests().length - before).toBe(1);
  });
});

/** The local model failing while the answer compares meaning: the run still answers, from the words. */
describe('rag-agent offline: a failing sentence comparison', () => {
  const data = tempDirectory('agentq-rag-dense-failure-');
  let env: TestEnv;
  let store: VectorStore;
  const broken: Embedder = {
    provider: 'local',
    modelId: 'broken-local-model',
    inProcess: true,
    embed: () => Promise.reject(new AgentqError('PROVIDER_ERROR', 'the model thread exited', { retryable: true })),
  };

  beforeAll(async () => {
    store = embeddedStoreOf(data.path);
    env = await startTestEnv({
      env: { AGENTQ_DATA_DIR: data.path },
      services: { vectorStore: store, embedder: broken },
    });
    // Two close paragraphs of one title, without vectors: the searches are lexical and embed nothing; only the comparison would.
    for (const [index, text] of [
      'Beroids typically feed on other ctenophores.',
      'Beroids typically feed on comb jellies.',
    ].entries()) {
      const document = {
        docId: `doc_beroida_${index}`,
        title: 'Beroida',
        path: `beroida/${index}.md`,
        type: 'markdown' as const,
        contentHash: 'h',
      };
      await store.upsert(
        'default',
        'beroids',
        toChunkRecords(
          [{ index: 0, text, page: null, headingPath: ['Beroida'], charStart: 0, charEnd: text.length }],
          document,
        ),
      );
    }
  });
  afterAll(async () => {
    await env.close();
    await store.close();
    data.remove();
  });

  it('answers from the lexical ranking and says the comparison failed', async () => {
    const queued = await env.client.enqueue({
      graph: 'rag-agent',
      input: {
        query: 'What do beroids typically feed on?',
        collection: 'beroids',
        max_iterations: 1,
        sources: 'cited',
      },
    });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    const output = done.output as RagOutput;
    expect(output).toMatchObject({ model: 'extractive', retrieval: 'lexical', sources: [{ title: 'Beroida' }] });
    expect(output.answer).toMatch(/^Beroids typically feed on/);
    expect(output.reasoning_steps).toContain(
      'the meaning comparison failed (the model thread exited); ranked by words alone',
    );
  });
});
