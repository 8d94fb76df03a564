import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { expertSystemPrompt } from '../../worker/agents/graphs/multi-agent.js';
import { type ScriptedChatRequest } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';

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

/**
 * multi-agent end to end: client → queue → worker → real openai SDK (chat and embeddings) → scripted server.
 * Recall modes, leads, input checks and windows are tested in test/unit/multi-agent-logic.test.ts.
 */
describe('multi-agent', () => {
  const { server, env: withEmbeddings } = useAgentE2E({ env: { EMBED_MODEL: 'scripted-embedding' } });

  const run = async (input: unknown) => {
    const queued = await withEmbeddings.client.enqueue({ graph: 'multi-agent', input });
    return withEmbeddings.client.wait(queued.id, { timeoutMs: 30_000 });
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
    const done = await run({
      query: 'Should Redis use AOF persistence or RDB snapshots for job retries?',
      experts,
      topN: 2,
    });
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: 'Use AOF (everysec) and idempotent handlers.', lead: 'redis', recall: 'embedding' },
    });
    const scores = (done.output as { experts: { score: number }[] }).experts.map((expert) => expert.score);
    expect(scores[0]).toBeGreaterThan(scores[1]!);

    // One embeddings request: the query and every expert's description.
    const embeddings = server.embeddingRequests();
    expect(embeddings).toHaveLength(1);
    expect((embeddings[0]!.body as { input: string[] }).input).toHaveLength(5);

    // Prompts, tools and consultations are tested in test/unit/multi-agent-logic.test.ts.
    expect(toolNames(server.chatRequests()[0]!)).toEqual(['queues']);

    const history = await withEmbeddings.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    const steps = await withEmbeddings.client.steps(done.id);
    expect(steps.map((step) => step.node)).toEqual(['recall', 'lead', 'consult', 'consult', 'lead']);
    expect(steps[0]!.usage).toMatchObject({ model: 'scripted-embedding', outputTokens: 0 });
  });

  it("recall 'first' and 'specific' give the lead every other expert as a tool (13 experts: 12 tools); topN caps them", async () => {
    const many = Array.from({ length: 13 }, (_, index) => ({
      name: `expert-${index}`,
      description: `Expert number ${index} of a large desk`,
    }));
    const names = (except: string) => many.map((expert) => expert.name).filter((name) => name !== except);
    server.setScript(() => ({ content: 'Answered alone.' }));
    const first = await run({ query: 'Who knows?', experts: many, recall: 'first' });
    expect(first).toMatchObject({ status: 'completed', output: { lead: 'expert-0', recall: 'first' } });
    expect((first.output as { experts: unknown[] }).experts).toHaveLength(13);
    expect(toolNames(server.chatRequests().at(-1)!)).toEqual(names('expert-0'));

    const specific = await run({ query: 'Who knows?', experts: many, lead: 'expert-7' });
    expect(specific).toMatchObject({ status: 'completed', output: { lead: 'expert-7', recall: 'specific' } });
    expect(toolNames(server.chatRequests().at(-1)!)).toEqual(names('expert-7'));

    const capped = await run({ query: 'Who knows?', experts: many, recall: 'first', topN: 4 });
    expect(capped.status).toBe('completed');
    expect(toolNames(server.chatRequests().at(-1)!)).toEqual(['expert-1', 'expert-2', 'expert-3']);
  });
});
