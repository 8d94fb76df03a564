import { describe, expect, it } from 'vitest';
import type { Message } from '../../shared/contracts/run-record.js';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Embedder } from '../../shared/ports/embedder.js';
import type { LanguageModelRequest } from '../../shared/ports/language-model.js';
import { MockLanguageModel, runInProcess } from '../../testing/index.js';
import {
  createMultiAgentGraph,
  expertSystemPrompt,
  leadSystemPrompt,
  multiAgentGraph,
} from '../../worker/agents/graphs/multi-agent.js';
import { embedText } from '../fakes/scripted-openai-server.js';

// multi-agent's recall and routing on the in-process runner, a scripted model and an embedder in this
// process (the scripted server's vectors); the end-to-end file (test/integration/multi-agent.test.ts)
// keeps a run through the engine, the OpenAI adapter's chat and embeddings over HTTP.

const experts = [
  { name: 'redis', description: 'Redis persistence, AOF, RDB snapshots, replication and memory eviction policies' },
  { name: 'queues', description: 'Job queues, BullMQ, retries, backoff, idempotency and at least once delivery' },
  { name: 'chef', description: 'French cooking, sauces, bread and pastry' },
  { name: 'gardener', description: 'Vegetable gardens, soil, compost and pruning fruit trees' },
];
const queues = experts[1]!;
const queuesLead = createMultiAgentGraph({ name: 'multi-agent-queues-lead', recall: 'specific', lead: 'queues' });

/** Embeds as the scripted server does, and counts its requests. */
function fakeEmbedder(): Embedder & { requests: string[][] } {
  const requests: string[][] = [];
  return {
    provider: 'openai',
    modelId: 'scripted-embedding',
    requests,
    embed: async (texts) => {
      requests.push([...texts]);
      return {
        vectors: texts.map((text) => embedText(text, 64)),
        usage: { inputTokens: texts.length },
        model: 'scripted-embedding',
        dimensions: 64,
      };
    },
  };
}
const systemOf = (request: LanguageModelRequest) => request.messages[0]?.content;
const toolNames = (request: LanguageModelRequest) => (request.tools ?? []).map((tool) => tool.name);
const nodes = (result: { steps: { node: string }[] }) => result.steps.map((step) => step.node);

describe('multi-agent logic', () => {
  it('recalls the top experts by embedding similarity; the best leads and consults the others as tools', async () => {
    const llm = new MockLanguageModel({
      generate: (request) => {
        if (systemOf(request) === expertSystemPrompt(queues))
          return 'Retries deliver at least once: make handlers idempotent.';
        if (request.tools && request.messages.at(-1)?.role === 'user')
          return {
            toolCalls: [
              { name: 'queues', arguments: { question: 'How do retries interact with persistence?' } },
              { name: 'chef', arguments: { question: 'Any sauce?' } },
            ],
          };
        return 'Use AOF (everysec) and idempotent handlers.';
      },
    });
    const embedder = fakeEmbedder();
    const done = await runInProcess(
      multiAgentGraph,
      { query: 'Should Redis use AOF persistence or RDB snapshots for job retries?', experts, topN: 2 },
      { services: { languageModel: llm, embedder } },
    );
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
    expect(embedder.requests).toHaveLength(1);
    expect(embedder.requests[0]).toHaveLength(5);

    expect(toolNames(llm.calls[0]!)).toEqual(['queues']);
    expect(systemOf(llm.calls[0]!)).toMatch(/You are redis[\s\S]*- queues: Job queues/);
    const consult = llm.calls.find((request) => systemOf(request) === expertSystemPrompt(queues))!;
    expect(consult.messages[1]).toEqual({ role: 'user', content: 'How do retries interact with persistence?' });

    expect(validateHistory(done.messages)).toEqual([]);
    expect(done.messages.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual([
      'Retries deliver at least once: make handlers idempotent.',
      "Error: there is no colleague named 'chef'. You can consult: queues.",
    ]);
    expect(nodes(done)).toEqual(['recall', 'lead', 'consult', 'consult', 'lead']);
    expect(done.steps[0]!.usage).toMatchObject({ model: 'scripted-embedding', outputTokens: 0 });
  });

  it('falls back to deterministic lexical recall without an embedder, and says so', async () => {
    const llm = new MockLanguageModel({ generate: 'Prune in late winter; compost in autumn.' });
    const done = await runInProcess(
      multiAgentGraph,
      { query: 'When should I prune my fruit trees and add compost?', experts, topN: 1 },
      { services: { languageModel: llm } },
    );
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
    // A single recalled expert has nobody to consult: no tools.
    expect(llm.calls[0]!.tools).toBeUndefined();

    const sauceModel = new MockLanguageModel({ generate: 'A beurre blanc.' });
    const sauce = await runInProcess(
      multiAgentGraph,
      { query: 'How do I make a sauce for bread?', experts, topN: 2 },
      { services: { languageModel: sauceModel } },
    );
    expect(sauce.output).toMatchObject({ lead: 'chef', recall: 'lexical' });
    expect(toolNames(sauceModel.calls[0]!)).toEqual([
      (sauce.output as { experts: { name: string }[] }).experts[1]!.name,
    ]);
  });

  it("recall 'first': the first expert leads, the next ones in list order are its colleagues, nothing is embedded", async () => {
    const llm = new MockLanguageModel({ generate: 'Knead, rest, bake.' });
    const embedder = fakeEmbedder();
    const done = await runInProcess(
      multiAgentGraph,
      { query: 'How do I bake bread?', experts, topN: 2, recall: 'first' },
      { services: { languageModel: llm, embedder } },
    );
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
    expect(embedder.requests).toHaveLength(0);
    expect(systemOf(llm.calls[0]!)).toBe(leadSystemPrompt(experts[0]!, [queues]));
  });

  it("recall 'first' and 'specific' default to every expert: the lead has all the others as tools", async () => {
    const llm = new MockLanguageModel({ generate: 'Knead, rest, bake.' });
    const first = await runInProcess(
      multiAgentGraph,
      { query: 'How do I bake bread?', experts, recall: 'first' },
      { services: { languageModel: llm } },
    );
    expect(first.status).toBe('completed');
    expect(toolNames(llm.calls[0]!)).toEqual(['queues', 'chef', 'gardener']);
    const byGraph = await runInProcess(queuesLead, { query: 'Sauces?', experts }, { services: { languageModel: llm } });
    expect(byGraph.status).toBe('completed');
    expect(toolNames(llm.calls[1]!)).toEqual(['redis', 'chef', 'gardener']);
    // Similarity keeps its default of 3: the lead and two colleagues.
    await runInProcess(
      multiAgentGraph,
      { query: 'How do I bake bread?', experts },
      { services: { languageModel: llm } },
    );
    expect(toolNames(llm.calls[2]!)).toHaveLength(2);
  });

  it("recall 'specific' per run: the named expert leads (lead alone implies it); per graph: the graph's lead", async () => {
    const llm = new MockLanguageModel({ generate: ['A roux.', 'Idempotent handlers.'] });
    const services = { languageModel: llm };
    const chef = await runInProcess(
      multiAgentGraph,
      { query: 'What is in a queue?', experts, topN: 3, lead: 'chef' },
      { services },
    );
    expect(chef).toMatchObject({
      status: 'completed',
      output: { lead: 'chef', recall: 'specific', experts: [{ name: 'chef' }, { name: 'redis' }, { name: 'queues' }] },
    });
    expect(systemOf(llm.calls[0]!)).toBe(leadSystemPrompt(experts[2]!, [experts[0]!, queues]));
    const byGraph = await runInProcess(queuesLead, { query: 'Sauces?', experts, topN: 1 }, { services });
    expect(byGraph).toMatchObject({
      status: 'completed',
      output: { lead: 'queues', recall: 'specific', experts: [{ name: 'queues', score: null }] },
    });
  });

  it('an unknown lead or duplicate experts fail the run at the door, before any model call', async () => {
    const llm = new MockLanguageModel();
    const services = { languageModel: llm };
    const done = await runInProcess(
      multiAgentGraph,
      { query: 'x', experts, recall: 'specific', lead: 'plumber' },
      { services },
    );
    expect(done).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(done.error?.message).toMatch(
      /lead 'plumber' is not one of the experts; known experts: 'redis', 'queues', 'chef', 'gardener'/,
    );
    const noLead = await runInProcess(
      multiAgentGraph,
      { query: 'x', experts, lead: 'chef', recall: 'first' },
      { services },
    );
    expect(noLead.error?.message).toMatch(/drop it or set recall to 'specific'/);
    const graphLead = await runInProcess(queuesLead, { query: 'x', experts: [experts[2]] }, { services });
    expect(graphLead).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(graphLead.error?.message).toMatch(/lead 'queues' is not one of the run's experts; known experts: 'chef'/);
    const duplicates = await runInProcess(
      multiAgentGraph,
      { query: 'x', experts: [experts[0], experts[0]] },
      { services },
    );
    expect(duplicates).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(duplicates.error?.message).toMatch(/expert names must be unique/);
    expect(llm.calls).toHaveLength(0);
  });

  it('memory.window: the lead sees its system prompt and the query, then only the last N messages', async () => {
    const llm = new MockLanguageModel({
      generate: [
        { toolCalls: [{ name: 'gardener', arguments: { question: 'first?' } }] },
        'answer one',
        { toolCalls: [{ name: 'gardener', arguments: { question: 'second?' } }] },
        'answer two',
        'A beurre blanc with herbs.',
      ],
    });
    const done = await runInProcess(
      multiAgentGraph,
      {
        query: 'How do I make a sauce for bread?',
        experts: [experts[2]!, experts[3]!],
        topN: 2,
        memory: { window: 2 },
      },
      { services: { languageModel: llm } },
    );
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: 'A beurre blanc with herbs.', lead: 'chef', consulted: ['gardener', 'gardener'] },
    });
    // The last request is the lead's final answer; the first consultation fell out of the window.
    const last: Message[] = llm.calls.at(-1)!.messages;
    expect(last.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(last[1]!.content).toBe('How do I make a sauce for bread?');
    expect(last[3]!.content).toBe('answer two');
    expect(validateHistory(done.messages)).toEqual([]);
  });
});
