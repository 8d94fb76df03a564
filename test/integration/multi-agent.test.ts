import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { createMultiAgentGraph, expertSystemPrompt, leadSystemPrompt } from '../../worker/agents/graphs/multi-agent.js';
import {
  startScriptedOpenAIServer,
  type ScriptedChatRequest,
  type ScriptedOpenAIServer,
} from '../fakes/scripted-openai-server.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

const experts = [
  { name: 'redis', description: 'Redis persistence, AOF, RDB snapshots, replication and memory eviction policies' },
  { name: 'queues', description: 'Job queues, BullMQ, retries, backoff, idempotency and at least once delivery' },
  { name: 'chef', description: 'French cooking, sauces, bread and pastry' },
  { name: 'gardener', description: 'Vegetable gardens, soil, compost and pruning fruit trees' },
];
const queues = experts[1]!;

const systemOf = (request: ScriptedChatRequest) => (request.body.messages[0] as Message).content;
const toolNames = (request: ScriptedChatRequest) =>
  (request.body.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);

/** multi-agent end to end: client → queue → worker → real openai SDK (chat and embeddings) → scripted server. */
describe('multi-agent', () => {
  let server: ScriptedOpenAIServer;
  let withEmbeddings: TestEnv;
  let lexicalOnly: TestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    withEmbeddings = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', EMBED_MODEL: 'scripted-embedding' },
    });
    lexicalOnly = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' },
      graphs: [createMultiAgentGraph({ name: 'multi-agent-queues-lead', recall: 'specific', lead: 'queues' })],
    });
  });
  afterAll(async () => {
    await withEmbeddings.close();
    await lexicalOnly.close();
    await server.close();
  });
  beforeEach(() => server.reset());

  const run = async (env: TestEnv, input: unknown, graph = 'multi-agent') => {
    const queued = await env.client.enqueue({ graph, input });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('recalls the top experts by embedding similarity; the best leads and consults the others as tools', async () => {
    server.setScript((request) => {
      if (systemOf(request) === expertSystemPrompt(queues))
        return { content: 'Retries deliver at least once: make handlers idempotent.' };
      if (request.body.tools && (request.body.messages.at(-1) as Message).role === 'user') {
        return {
          toolCalls: [
            { name: 'queues', arguments: { question: 'How do retries interact with persistence?' } },
            { name: 'chef', arguments: { question: 'Any sauce?' } },
          ],
        };
      }
      return { content: 'Use AOF (everysec) and idempotent handlers.' };
    });
    const done = await run(withEmbeddings, {
      query: 'Should Redis use AOF persistence or RDB snapshots for job retries?',
      experts,
      topN: 2,
    });
    expect(done).toMatchObject({
      status: 'completed',
      output: {
        answer: 'Use AOF (everysec) and idempotent handlers.',
        lead: 'redis',
        recall: 'embedding',
        experts: [{ name: 'redis' }, { name: 'queues' }],
        consulted: ['queues'],
      },
    });
    const scores = (done.output as { experts: { score: number }[] }).experts.map((expert) => expert.score);
    expect(scores[0]).toBeGreaterThan(scores[1]!);

    // One embeddings request: the query and every expert's description.
    const embeddings = server.embeddingRequests();
    expect(embeddings).toHaveLength(1);
    expect((embeddings[0]!.body as { input: string[] }).input).toHaveLength(5);

    const chats = server.chatRequests();
    const leadFirst = chats[0]!;
    expect(toolNames(leadFirst)).toEqual(['queues']);
    expect(systemOf(leadFirst)).toMatch(/You are redis[\s\S]*- queues: Job queues/);
    const consult = chats.find((request) => systemOf(request) === expertSystemPrompt(queues))!;
    expect(consult.body.messages[1]).toEqual({ role: 'user', content: 'How do retries interact with persistence?' });

    const history = await withEmbeddings.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    const toolMessages = history.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.content)).toEqual([
      'Retries deliver at least once: make handlers idempotent.',
      "Error: there is no colleague named 'chef'. You can consult: queues.",
    ]);
    const steps = await withEmbeddings.client.steps(done.id);
    expect(steps.map((step) => step.node)).toEqual(['recall', 'lead', 'consult', 'consult', 'lead']);
    expect(steps[0]!.usage).toMatchObject({ model: 'scripted-embedding', outputTokens: 0 });
  });

  it('falls back to deterministic lexical recall without EMBED_MODEL, and says so', async () => {
    server.setScript([{ content: 'Prune in late winter; compost in autumn.' }]);
    const done = await run(lexicalOnly, {
      query: 'When should I prune my fruit trees and add compost?',
      experts,
      topN: 1,
    });
    expect(done).toMatchObject({
      status: 'completed',
      output: {
        answer: 'Prune in late winter; compost in autumn.',
        lead: 'gardener',
        recall: 'lexical',
        experts: [{ name: 'gardener' }],
        consulted: [],
      },
    });
    expect(server.embeddingRequests()).toHaveLength(0);
    // A single recalled expert has nobody to consult: no tools.
    expect(server.chatRequests()[0]!.body.tools).toBeUndefined();

    server.reset();
    server.setScript([{ content: 'A beurre blanc.' }]);
    const sauce = await run(lexicalOnly, { query: 'How do I make a sauce for bread?', experts, topN: 2 });
    expect(sauce.output).toMatchObject({ lead: 'chef', recall: 'lexical' });
    expect(toolNames(server.chatRequests()[0]!)).toEqual([
      (sauce.output as { experts: { name: string }[] }).experts[1]!.name,
    ]);
  });

  it("recall 'first': the first expert leads, the next ones in list order are its colleagues, nothing is embedded", async () => {
    server.setScript([{ content: 'Knead, rest, bake.' }]);
    const done = await run(withEmbeddings, { query: 'How do I bake bread?', experts, topN: 2, recall: 'first' });
    expect(done).toMatchObject({
      status: 'completed',
      output: {
        lead: 'redis',
        recall: 'first',
        experts: [
          { name: 'redis', score: null },
          { name: 'queues', score: null },
        ],
      },
    });
    expect(server.embeddingRequests()).toHaveLength(0);
    expect(systemOf(server.chatRequests()[0]!)).toBe(leadSystemPrompt(experts[0]!, [queues]));
  });

  it("recall 'specific' per run: the named expert leads (lead alone implies it); per graph: the graph's lead", async () => {
    server.setScript([{ content: 'A roux.' }, { content: 'Idempotent handlers.' }]);
    const chef = await run(lexicalOnly, { query: 'What is in a queue?', experts, topN: 3, lead: 'chef' });
    expect(chef).toMatchObject({
      status: 'completed',
      output: { lead: 'chef', recall: 'specific', experts: [{ name: 'chef' }, { name: 'redis' }, { name: 'queues' }] },
    });
    expect(systemOf(server.chatRequests()[0]!)).toBe(leadSystemPrompt(experts[2]!, [experts[0]!, queues]));
    const byGraph = await run(lexicalOnly, { query: 'Sauces?', experts, topN: 1 }, 'multi-agent-queues-lead');
    expect(byGraph).toMatchObject({
      status: 'completed',
      output: { lead: 'queues', recall: 'specific', experts: [{ name: 'queues', score: null }] },
    });
  });

  it('an unknown lead fails the run at the door naming the known experts, before any model call', async () => {
    const done = await run(lexicalOnly, { query: 'x', experts, recall: 'specific', lead: 'plumber' });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(done.error?.message).toMatch(
      /lead 'plumber' is not one of the experts; known experts: 'redis', 'queues', 'chef', 'gardener'/,
    );
    const noLead = await run(lexicalOnly, { query: 'x', experts, lead: 'chef', recall: 'first' });
    expect(noLead.error?.message).toMatch(/drop it or set recall to 'specific'/);
    const graphLead = await run(lexicalOnly, { query: 'x', experts: [experts[2]] }, 'multi-agent-queues-lead');
    expect(graphLead).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(graphLead.error?.message).toMatch(/lead 'queues' is not one of the run's experts; known experts: 'chef'/);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('rejects duplicate expert names at the door', async () => {
    const done = await run(lexicalOnly, { query: 'x', experts: [experts[0], experts[0]] });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(done.error?.message).toMatch(/expert names must be unique/);
  });

  it('memory.window: the lead sees its system prompt and the query, then only the last N messages', async () => {
    const pair = [experts[2]!, experts[3]!];
    server.setScript([
      { toolCalls: [{ name: 'gardener', arguments: { question: 'first?' } }] },
      { content: 'answer one' },
      { toolCalls: [{ name: 'gardener', arguments: { question: 'second?' } }] },
      { content: 'answer two' },
      { content: 'A beurre blanc with herbs.' },
    ]);
    const done = await run(lexicalOnly, {
      query: 'How do I make a sauce for bread?',
      experts: pair,
      topN: 2,
      memory: { window: 2 },
    });
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: 'A beurre blanc with herbs.', lead: 'chef', consulted: ['gardener', 'gardener'] },
    });
    // The last request is the lead's final answer (consultations come before it).
    const last = server.chatRequests().at(-1)!.body.messages as Message[];
    // The first consultation fell out of the window; the query and the latest call with its result did not.
    expect(last.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(last[1]!.content).toBe('How do I make a sauce for bread?');
    expect(last[3]!.content).toBe('answer two');
    expect(validateHistory(await lexicalOnly.client.messages(done.id))).toEqual([]);
  });
});
