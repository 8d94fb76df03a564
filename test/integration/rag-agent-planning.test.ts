import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import type { RagOutput } from '../../shared/retrieval/rag-output.js';
import { createRagAgentGraph } from '../../worker/agents/rag/rag-agent.js';
import type { ScriptedChatRequest, ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

const toolNames = (request: ScriptedChatRequest) =>
  (request.body.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];

const SUB_QUESTIONS = ['Who drew the first sketch of the Eiffel Tower?', 'Where was Maurice Koechlin born?'];

/** createRagAgentGraph({ planning: true }): the model plans the sub-questions first, then searches each. */
describe('rag-agent planning: the plan tool', () => {
  const data = tempDirectory('agentq-rag-plan-');
  let rag: RagTestEnv<TestEnv>;
  let server: ScriptedOpenAIServer;
  const planner = createRagAgentGraph({ name: 'rag-planner', planning: true });

  beforeAll(async () => {
    rag = await startRagTestEnv((options) => startTestEnv({ ...options, graphs: [planner] }), data.path, {
      model: {},
    });
    server = rag.server!;
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris' });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });
  beforeEach(() => server.reset());

  const ask = async (graph: string) => {
    const queued = await rag.env.client.enqueue({
      graph,
      input: { query: 'Where was the man who drew the first sketch of the Eiffel Tower born?', collection: 'paris' },
    });
    const done = await rag.env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    return done;
  };

  it('the plan is kept in the state and the reasoning, costs no search round, and is offered until made', async () => {
    server.setScript((request, index) => {
      if (index === 0) return { toolCalls: [{ name: 'plan', arguments: { sub_questions: SUB_QUESTIONS } }] };
      if (index === 1) return { toolCalls: SUB_QUESTIONS.map((query) => ({ name: 'search', arguments: { query } })) };
      const id = /^\[([0-9a-f]{6})\]/m.exec(messagesOf(request).at(-1)?.content ?? '')?.[1] ?? 'none00';
      return { toolCalls: [{ name: 'final_answer', arguments: { answer: `In Buhl [${id}].`, citations: [id] } }] };
    });
    const done = await ask('rag-planner');
    const requests = server.chatRequests();
    expect(requests).toHaveLength(3);
    expect(toolNames(requests[0]!)).toEqual(['plan', 'search', 'refine_and_search', 'final_answer']);
    expect(toolNames(requests[1]!)).toEqual(['search', 'refine_and_search', 'final_answer']);
    // The model read that its plan was kept before it searched.
    expect(messagesOf(requests[1]!).at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringMatching(/^Plan recorded/),
    });
    const output = done.output as RagOutput;
    expect(output.reasoning_steps[0]).toBe(`Planned: 1) ${SUB_QUESTIONS[0]} 2) ${SUB_QUESTIONS[1]}`);
    // Both searches of the plan ran in one round; the plan took none.
    expect(output).toMatchObject({ search_count: 2, iterations: 1 });
    const state = (await rag.env.client.store.reads.state(done.id)) as { plan: string[] };
    expect(state.plan).toEqual(SUB_QUESTIONS);
  });

  it('the built-in rag-agent offers no plan tool, and a plan call there is refused and costs its round', async () => {
    server.setScript((request, index) => {
      if (index === 0) return { toolCalls: [{ name: 'plan', arguments: { sub_questions: SUB_QUESTIONS } }] };
      if (index === 1) return { toolCalls: [{ name: 'search', arguments: { query: SUB_QUESTIONS[0]! } }] };
      const id = /^\[([0-9a-f]{6})\]/m.exec(messagesOf(request).at(-1)?.content ?? '')?.[1] ?? 'none00';
      return { toolCalls: [{ name: 'final_answer', arguments: { answer: `Koechlin [${id}].`, citations: [id] } }] };
    });
    const done = await ask('rag-agent');
    const requests = server.chatRequests();
    expect(toolNames(requests[0]!)).not.toContain('plan');
    expect(messagesOf(requests[1]!).at(-1)).toMatchObject({ role: 'tool', content: expect.stringMatching(/^Error/) });
    const output = done.output as RagOutput;
    expect(output.reasoning_steps.some((step) => step.startsWith('Planned'))).toBe(false);
    expect(output).toMatchObject({ search_count: 1, iterations: 2 });
  });
});
