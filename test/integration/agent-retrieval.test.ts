import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { formatPassages, retrievalChannel, retrievalNode, sourcesOf } from '../../worker/agents/retrieval-node.js';
import type { ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** A custom graph with the reusable retrieval node: retrieve, then hand the prompt on as the output. */
const lookup = defineGraph({
  name: 'lookup',
  state: { question: channel.replace(''), retrieval: retrievalChannel(), prompt: channel.replace('') },
  initialState: (input: { question: string }) => ({ question: input.question }),
  output: (state) => ({ prompt: state.prompt, sources: sourcesOf(state.retrieval) }),
})
  .node(
    'retrieve',
    retrievalNode<{ question: string }>({
      query: (state) => state.question,
      options: { collection: 'paris', k: 1, minScore: 0 },
    }),
  )
  .node('prompt', (state) => ({ prompt: formatPassages(state.retrieval) }))
  .edge(START, 'retrieve')
  .edge('retrieve', 'prompt')
  .edge('prompt', END)
  .build();

describe('retrieval on any agent', () => {
  const data = tempDirectory('agentq-retrieve-');
  let rag: RagTestEnv<TestEnv>;
  let server: ScriptedOpenAIServer;
  beforeAll(async () => {
    rag = await startRagTestEnv((options) => startTestEnv({ ...options, graphs: [lookup] }), data.path, { model: {} });
    server = rag.server!;
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris' });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });
  beforeEach(() => server.reset());

  const run = async (graph: string, input: unknown) => {
    const queued = await rag.env.client.enqueue({ graph, input });
    return rag.env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('react-agent with retrieve: the passages reach the first prompt with ids, and the output keeps the sources', async () => {
    server.setScript([{ content: 'Maurice Koechlin drew it.' }]);
    const done = await run('react-agent', {
      query: 'Who drew the first sketch of the Eiffel Tower?',
      tools: [],
      retrieve: { collection: 'paris', k: 2 },
    });
    expect(done.status).toBe('completed');
    const output = done.output as { answer: string; sources: { id: string; title: string; score: number }[] };
    expect(output.answer).toBe('Maurice Koechlin drew it.');
    expect(output.sources.length).toBeGreaterThan(0);
    expect(output.sources.length).toBeLessThanOrEqual(2);
    expect(output.sources[0]).toMatchObject({
      title: 'Maurice Koechlin',
      score: 1,
      id: expect.stringMatching(/^[0-9a-f]{6}$/),
    });
    const user = (server.chatRequests()[0]!.body.messages as unknown as Message[]).find(
      (message) => message.role === 'user',
    )!.content!;
    expect(user).toMatch(/^Who drew the first sketch of the Eiffel Tower\?\n\nPassages from the documents/);
    expect(user).toContain(`[${output.sources[0]!.id}] Maurice Koechlin`);
    expect((await rag.env.client.steps(done.id)).map((step) => step.node)).toEqual(['retrieve', 'model']);
  });

  it('minScore leaves weak passages out; a bad retrieve option fails the run naming it before any model call', async () => {
    server.setScript([{ content: 'ok' }]);
    const strict = await run('react-agent', {
      query: 'Who drew the first sketch of the Eiffel Tower?',
      tools: [],
      retrieve: { collection: 'paris', k: 5, minScore: 1 },
    });
    expect((strict.output as { sources: unknown[] }).sources).toHaveLength(1);
    server.reset();
    const bad = await run('react-agent', { query: 'q', retrieve: { collection: 'paris', k: 50 } });
    expect(bad.error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('retrieve.k') });
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('the retrieval node works in a custom graph', async () => {
    const done = await run('lookup', { question: 'Where does the Louvre stand?' });
    expect(done.status).toBe('completed');
    const output = done.output as { prompt: string; sources: { title: string }[] };
    expect(output.sources).toEqual([expect.objectContaining({ title: 'Louvre' })]);
    expect(output.prompt).toContain('Right Bank of the Seine');
  });
});
