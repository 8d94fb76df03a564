import { contentText } from '../../shared/contracts/run-record.js';
import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { estimatePromptTokens } from '../../shared/llm/estimate-tokens.js';
import { ANCHOR_HEADING, SUMMARY_HEADING } from '../../worker/runtime/memory/prompt-history.js';
import { SUMMARIZER_SYSTEM_PROMPT } from '../../worker/agents/memory/summarize-history.js';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import { DEFAULT_JUDGE_SYSTEM_PROMPT, DEFAULT_WRITER_SYSTEM_PROMPT } from '../../worker/agents/graphs/reflect.js';
import { type ScriptedChatRequest, type ScriptedResponse } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';

const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];
const systemOf = (request: ScriptedChatRequest) => messagesOf(request)[0]?.content ?? '';
const isSummarizer = (request: ScriptedChatRequest) => systemOf(request) === SUMMARIZER_SYSTEM_PROMPT;
/** AGENTQ_SUMMARIZE_AT 0.5 × AGENTQ_CONTEXT_WINDOW 1000. */
const THRESHOLD = 500;
const SUMMARY = 'SUMMARY: earlier drafts covered queues; the reviewer asked for retries and backoff.';
/** About 120 tokens: three of these pass the threshold. */
const longText = (label: string) =>
  `${label}: ` + 'A job queue hands work to workers, keeps it safe across restarts and retries what failed. '.repeat(7);

/**
 * The token-threshold summariser on reflect and multi-agent, end to end: client → queue → worker →
 * real openai SDK → scripted server over HTTP. The summary is its own step; the run carries on with it.
 */
describe('summarisation in reflect and multi-agent', () => {
  const { server, env } = useAgentE2E({
    env: {
      AGENTQ_CONTEXT_WINDOW: '1000',
      AGENTQ_SUMMARIZE_AT: '0.5',
    },
  });

  const run = async (graph: string, input: unknown) => {
    const queued = await env.client.enqueue({ graph, input });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  /** A writer with long drafts and a judge that approves the fourth. */
  const reflectScript = () => {
    let drafts = 0;
    return (request: ScriptedChatRequest): ScriptedResponse => {
      if (isSummarizer(request)) return { content: SUMMARY };
      if (systemOf(request) === DEFAULT_JUDGE_SYSTEM_PROMPT)
        return {
          content: JSON.stringify({
            approved: drafts >= 4,
            critique: drafts >= 4 ? '' : `Say more about retries (${drafts}).`,
          }),
        };
      drafts += 1;
      return { content: longText(`Draft ${drafts}`) };
    };
  };

  it('reflect: a writer prompt past the threshold is summarised in its own step; the task stays verbatim', async () => {
    server.setScript(reflectScript());
    const task = 'Explain what a job queue does, in one paragraph.';
    const done = await run('reflect', { task, maxIterations: 5 });
    expect(done).toMatchObject({
      status: 'completed',
      output: { approved: true, iterations: 4, answer: longText('Draft 4') },
    });

    const nodes = (await env.client.steps(done.id)).map((step) => step.node);
    expect(nodes).toContain('summarize');
    expect(nodes.filter((node) => node === 'write')).toHaveLength(
      4 + nodes.filter((node) => node === 'summarize').length,
    );

    const requests = server.chatRequests();
    const first = requests.findIndex(isSummarizer);
    expect(first).toBeGreaterThan(0);
    expect(messagesOf(requests[first]!)[1]!.content).toMatch(
      /Messages to fold into the summary:[\s\S]*\[assistant\] Draft 1:/,
    );
    // The writer's next prompt: its system prompt, the task and the summary in the system message; the oldest draft gone.
    const after = messagesOf(requests[first + 1]!);
    expect(systemOf(requests[first + 1]!)).toBe(after[0]!.content);
    expect(after[0]!.content).toMatch(new RegExp(`^${DEFAULT_WRITER_SYSTEM_PROMPT.slice(0, 40)}`));
    expect(after[0]!.content).toContain(`${ANCHOR_HEADING}\n${task}`);
    expect(after[0]!.content).toContain(`${SUMMARY_HEADING}\n${SUMMARY}`);
    expect(JSON.stringify(after)).not.toContain('Draft 1:');
    expect(after.at(-1)!.role).toBe('user');
    expect(validateHistory(after)).toEqual([]);
    // Every writer prompt actually sent stays under the threshold.
    for (const request of requests.filter((request) =>
      systemOf(request).startsWith(DEFAULT_WRITER_SYSTEM_PROMPT.slice(0, 40)),
    )) {
      expect(await estimatePromptTokens(messagesOf(request))).toBeLessThanOrEqual(THRESHOLD);
    }
    // The stored history stays the complete audit log.
    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history.filter((message) => message.role === 'assistant')).toHaveLength(4);
    expect(history.some((message) => contentText(message.content).includes(SUMMARY_HEADING))).toBe(false);
  });

  it('multi-agent: the lead prompt past the threshold is summarised; the lead carries on with the summary and the query', async () => {
    const experts = [
      { name: 'redis', description: 'Redis persistence, AOF, RDB snapshots and replication' },
      { name: 'queues', description: 'Job queues, retries, backoff and idempotency' },
    ];
    const query = 'How do Redis persistence and job retries work together?';
    let leadTurns = 0;
    server.setScript((request) => {
      if (isSummarizer(request)) return { content: 'SUMMARY: the queues expert explained retries and backoff twice.' };
      if (!request.body.tools) return { content: longText('Expert answer') };
      leadTurns += 1;
      return leadTurns <= 3
        ? {
            content: longText(`Lead thinking ${leadTurns}`),
            toolCalls: [{ name: 'queues', arguments: { question: `Retries, part ${leadTurns}?` } }],
          }
        : { content: 'Use AOF and idempotent handlers.' };
    });
    const done = await run('multi-agent', { query, experts, topN: 2 });
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: 'Use AOF and idempotent handlers.', lead: 'redis', consulted: ['queues', 'queues', 'queues'] },
    });

    const nodes = (await env.client.steps(done.id)).map((step) => step.node);
    expect(nodes).toContain('summarize');
    const requests = server.chatRequests();
    const first = requests.findIndex(isSummarizer);
    expect(first).toBeGreaterThan(0);
    const after = messagesOf(requests[first + 1]!);
    expect(after[0]!.content).toContain(`${ANCHOR_HEADING}\n${query}`);
    expect(after[0]!.content).toContain(`${SUMMARY_HEADING}\nSUMMARY: the queues expert`);
    expect(JSON.stringify(after)).not.toContain('Lead thinking 1');
    // The query is in the system message, not pinned a second time as a user message.
    expect(after.filter((message) => message.role === 'user' && message.content === query)).toHaveLength(0);
    expect(validateHistory(after)).toEqual([]);
    expect(validateHistory(await env.client.messages(done.id))).toEqual([]);
  });

  it('memory.summarizeAt 0 turns the summariser off for one run', async () => {
    server.setScript(reflectScript());
    const done = await run('reflect', { task: 'Explain a job queue.', maxIterations: 5, memory: { summarizeAt: 0 } });
    expect(done).toMatchObject({ status: 'completed', output: { iterations: 4 } });
    expect(server.chatRequests().filter(isSummarizer)).toHaveLength(0);
    expect((await env.client.steps(done.id)).map((step) => step.node)).not.toContain('summarize');
  });

  it("react-agent honours the run's memory.summarizeAt over AGENTQ_SUMMARIZE_AT", async () => {
    server.setScript((request) => (isSummarizer(request) ? { content: SUMMARY } : { content: 'ok' }));
    const query = longText('Question').repeat(5); // ~600 tokens: past 0.5 of the window, under 0.9
    const nodesOf = async (memory?: unknown) => {
      const done = await run('react-agent', { query, tools: [], ...(memory ? { memory } : {}) });
      expect(done.status).toBe('completed');
      return (await env.client.steps(done.id)).map((step) => step.node);
    };
    expect(await nodesOf()).toContain('summarize');
    expect(await nodesOf({ summarizeAt: 0.9 })).toEqual(['model']);
    expect(await nodesOf({ summarizeAt: 0 })).toEqual(['model']);
  });

  it('a memory option with both window and summarizeAt fails the run naming both, before any model call', async () => {
    const done = await run('multi-agent', {
      query: 'q',
      experts: [{ name: 'a', description: 'anything' }],
      memory: { window: 4, summarizeAt: 0.5 },
    });
    expect(done.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/memory takes either window .* or summarizeAt/),
    });
    const range = await run('reflect', { task: 't', memory: { summarizeAt: 2 } });
    expect(range.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('memory.summarizeAt must be a number from 0 to 1'),
    });
    expect(server.chatRequests()).toHaveLength(0);
  });
});
