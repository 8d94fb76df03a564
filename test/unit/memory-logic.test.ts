import { describe, expect, it } from 'vitest';
import { contentText, type Message } from '../../shared/contracts/run-record.js';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { estimatePromptTokens } from '../../shared/llm/estimate-tokens.js';
import type { LanguageModelRequest } from '../../shared/ports/language-model.js';
import { MockLanguageModel, runInProcess, type InProcessResult, type MockResult } from '../../testing/index.js';
import { multiAgentGraph } from '../../worker/agents/graphs/multi-agent.js';
import { reactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import {
  DEFAULT_JUDGE_SYSTEM_PROMPT,
  DEFAULT_WRITER_SYSTEM_PROMPT,
  reflectGraph,
} from '../../worker/agents/graphs/reflect.js';
import { SUMMARIZER_SYSTEM_PROMPT } from '../../worker/agents/memory/summarize-history.js';
import { withoutOpenToolCalls } from '../../worker/runtime/memory/conversation-history.js';
import { builtInTools } from '../../worker/agents/tools/built-in-tools.js';
import { ToolRegistry } from '../../worker/agents/tools/tool-registry.js';
import { ANCHOR_HEADING, SUMMARY_HEADING } from '../../worker/runtime/memory/prompt-history.js';

// Message windows and the token-threshold summariser of react-agent, reflect and multi-agent, on the
// in-process runner and a scripted model. The end-to-end files (test/integration/memory.test.ts,
// agent-memory-options.test.ts) keep conversations across runs and workers, which live in Redis.

/** summarizeAt 0.5 × contextWindow 1000, as AGENTQ_SUMMARIZE_AT and AGENTQ_CONTEXT_WINDOW would set them. */
const THRESHOLD = 500;
const services = (languageModel: MockLanguageModel) => ({
  languageModel,
  tools: new ToolRegistry(builtInTools()),
  agentSettings: { contextWindow: 1000, summarizeAt: 0.5 },
});
const model = (generate: (request: LanguageModelRequest) => MockResult) =>
  new MockLanguageModel({ modelId: 'scripted-chat', generate });
const systemOf = (request: LanguageModelRequest) => contentText(request.messages[0]?.content ?? '');
const isSummarizer = (request: LanguageModelRequest) => systemOf(request) === SUMMARIZER_SYSTEM_PROMPT;
const nodes = (result: InProcessResult) => result.steps.map((step) => step.node);
const SUMMARY = 'SUMMARY: earlier drafts covered queues; the reviewer asked for retries and backoff.';
/** About 120 tokens: three of these pass the threshold. */
const longText = (label: string) =>
  `${label}: ` + 'A job queue hands work to workers, keeps it safe across restarts and retries what failed. '.repeat(7);

describe('react-agent memory', () => {
  const QUERY = 'Add the numbers one by one and tell me when you are done.';
  /** Thinks aloud (~90 tokens per step) and calls the calculator `rounds` times, then answers. */
  function talkativeAgent(rounds: number) {
    let step = 0;
    return (request: LanguageModelRequest): MockResult => {
      if (isSummarizer(request))
        return 'SUMMARY: the user wants numbers added one by one; partial sums so far are correct.';
      const current = step++;
      if (current >= rounds) return 'All done: 21.';
      return {
        text:
          `Thinking step ${current}: ` +
          'I will carefully add the next number to the running total and check the result. '.repeat(5),
        toolCalls: [{ name: 'calculator', arguments: { expression: `${current}+${current + 1}` } }],
      };
    };
  }

  it('summarises as its own step when the prompt passes the threshold, and the run goes on with a valid, shorter prompt', async () => {
    const llm = model(talkativeAgent(7));
    const done = await runInProcess(
      reactAgentGraph,
      { query: QUERY, tools: ['calculator'] },
      { services: services(llm) },
    );
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'All done: 21.' } });

    const summarizeSteps = done.steps.filter((step) => step.node === 'summarize');
    expect(summarizeSteps.length).toBeGreaterThanOrEqual(1);
    for (const summarize of summarizeSteps) {
      // The model step before it only decided: it sent nothing (no usage) and appended nothing.
      const before = done.steps[summarize.index - 1]!;
      expect(before.node).toBe('model');
      expect(before.usage).toBeUndefined();
      expect(summarize.usage).toMatchObject({ model: 'scripted-chat' });
    }
    const firstSummary = llm.calls.findIndex(isSummarizer);
    expect(firstSummary).toBeGreaterThan(0);
    expect(llm.calls[firstSummary]!.messages[1]!.content).toMatch(
      /Messages to fold into the summary:\n\[user\] Add the numbers[\s\S]*Thinking step 0/,
    );
    for (const request of llm.calls.filter((request) => !isSummarizer(request))) {
      expect(validateHistory(request.messages)).toEqual([]);
      expect(await estimatePromptTokens(request.messages)).toBeLessThanOrEqual(THRESHOLD);
    }
    // After the summary: system prompt + summary first, the user's request kept verbatim, the oldest steps gone.
    const after = llm.calls[firstSummary + 1]!.messages;
    expect(after[0]!.role).toBe('system');
    expect(after[0]!.content).toContain(`${SUMMARY_HEADING}\nSUMMARY: the user wants numbers added`);
    expect(after[0]!.content).toMatch(/^You are a helpful assistant/);
    expect(after[1]).toEqual({ role: 'user', content: QUERY });
    expect(JSON.stringify(after)).not.toContain('Thinking step 0');
    expect(after.length).toBeLessThan(llm.calls[firstSummary - 1]!.messages.length);
    // The run's history is the complete, valid audit log: nothing was replaced or inserted.
    expect(validateHistory(done.messages)).toEqual([]);
    expect(done.messages.filter((message) => message.role === 'tool')).toHaveLength(7);
    expect(done.messages.some((message) => contentText(message.content).includes(SUMMARY_HEADING))).toBe(false);
  });

  it("honours the run's memory.summarizeAt over the worker's setting", async () => {
    const query = longText('Question').repeat(5); // ~600 tokens: past 0.5 of the window, under 0.9
    const nodesOf = async (memory?: unknown) => {
      const llm = model((request) => (isSummarizer(request) ? SUMMARY : 'ok'));
      const done = await runInProcess(
        reactAgentGraph,
        { query, tools: [], ...(memory ? { memory } : {}) },
        { services: services(llm) },
      );
      expect(done.status).toBe('completed');
      return nodes(done);
    };
    expect(await nodesOf()).toContain('summarize');
    expect(await nodesOf({ summarizeAt: 0.9 })).toEqual(['model']);
    expect(await nodesOf({ summarizeAt: 0 })).toEqual(['model']);
  });

  it('a message window shows the model only the last N messages (system prompt and the current question kept)', async () => {
    // The two earlier turns of a conversation, as the worker seeds a run's history with them.
    const first = model(() => 'Hello Ada.');
    const one = await runInProcess(
      reactAgentGraph,
      { query: 'My name is Ada.', tools: [] },
      { services: services(first) },
    );
    const earlier: Message[] = [
      ...one.messages,
      { role: 'user', content: 'Note that I like trains.' },
      { role: 'assistant', content: 'Noted.' },
    ];
    const llm = model(() => 'You asked me to note it.');
    const third = await runInProcess(
      reactAgentGraph,
      { query: 'What did I ask last?', tools: [], memory: { window: 2 } },
      { services: services(llm), messages: earlier },
    );
    expect(third.status).toBe('completed');
    expect(llm.calls[0]!.messages.map((message) => `${message.role}: ${contentText(message.content ?? '')}`)).toEqual([
      `system: ${contentText(first.calls[0]!.messages[0]!.content ?? '')}`,
      'user: Note that I like trains.',
      'assistant: Noted.',
      'user: What did I ask last?',
    ]);
    // The history stays complete.
    expect(third.messages).toHaveLength(7);
  });

  it('a bad memory option fails the run naming it, before any model call', async () => {
    const llm = model(() => 'never asked');
    const done = await runInProcess(
      reactAgentGraph,
      { query: 'q', memory: { window: 0 } },
      { services: services(llm) },
    );
    expect(done.error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('memory.window') });
    expect(llm.calls).toHaveLength(0);
  });
});

describe('summarisation in reflect and multi-agent', () => {
  /** A writer with long drafts and a judge that approves the fourth. */
  const reflectScript = () => {
    let drafts = 0;
    return (request: LanguageModelRequest): MockResult => {
      if (isSummarizer(request)) return SUMMARY;
      if (systemOf(request) === DEFAULT_JUDGE_SYSTEM_PROMPT)
        return JSON.stringify({
          approved: drafts >= 4,
          critique: drafts >= 4 ? '' : `Say more about retries (${drafts}).`,
        });
      drafts += 1;
      return longText(`Draft ${drafts}`);
    };
  };
  const isWriter = (request: LanguageModelRequest) =>
    systemOf(request).startsWith(DEFAULT_WRITER_SYSTEM_PROMPT.slice(0, 40));

  it('reflect: a writer prompt past the threshold is summarised in its own step; the task stays verbatim', async () => {
    const llm = model(reflectScript());
    const task = 'Explain what a job queue does, in one paragraph.';
    const done = await runInProcess(reflectGraph, { task, maxIterations: 5 }, { services: services(llm) });
    expect(done).toMatchObject({
      status: 'completed',
      output: { approved: true, iterations: 4, answer: longText('Draft 4') },
    });
    expect(nodes(done)).toContain('summarize');
    expect(nodes(done).filter((node) => node === 'write')).toHaveLength(
      4 + nodes(done).filter((node) => node === 'summarize').length,
    );
    const first = llm.calls.findIndex(isSummarizer);
    expect(first).toBeGreaterThan(0);
    expect(llm.calls[first]!.messages[1]!.content).toMatch(
      /Messages to fold into the summary:[\s\S]*\[assistant\] Draft 1:/,
    );
    // The writer's next prompt: its system prompt, the task and the summary in the system message; the oldest draft gone.
    const after = llm.calls[first + 1]!.messages;
    expect(after[0]!.content).toMatch(new RegExp(`^${DEFAULT_WRITER_SYSTEM_PROMPT.slice(0, 40)}`));
    expect(after[0]!.content).toContain(`${ANCHOR_HEADING}\n${task}`);
    expect(after[0]!.content).toContain(`${SUMMARY_HEADING}\n${SUMMARY}`);
    expect(JSON.stringify(after)).not.toContain('Draft 1:');
    expect(after.at(-1)!.role).toBe('user');
    expect(validateHistory(after)).toEqual([]);
    for (const request of llm.calls.filter(isWriter))
      expect(await estimatePromptTokens(request.messages)).toBeLessThanOrEqual(THRESHOLD);
    expect(validateHistory(done.messages)).toEqual([]);
    expect(done.messages.filter((message) => message.role === 'assistant')).toHaveLength(4);
    expect(done.messages.some((message) => contentText(message.content).includes(SUMMARY_HEADING))).toBe(false);
  });

  it('multi-agent: the lead prompt past the threshold is summarised; the lead carries on with the summary and the query', async () => {
    const experts = [
      { name: 'redis', description: 'Redis persistence, AOF, RDB snapshots and replication' },
      { name: 'queues', description: 'Job queues, retries, backoff and idempotency' },
    ];
    const query = 'How do Redis persistence and job retries work together?';
    let leadTurns = 0;
    const llm = model((request) => {
      if (isSummarizer(request)) return 'SUMMARY: the queues expert explained retries and backoff twice.';
      if (!request.tools) return longText('Expert answer');
      leadTurns += 1;
      return leadTurns <= 3
        ? {
            text: longText(`Lead thinking ${leadTurns}`),
            toolCalls: [{ name: 'queues', arguments: { question: `Retries, part ${leadTurns}?` } }],
          }
        : 'Use AOF and idempotent handlers.';
    });
    const done = await runInProcess(multiAgentGraph, { query, experts, topN: 2 }, { services: services(llm) });
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: 'Use AOF and idempotent handlers.', lead: 'redis', consulted: ['queues', 'queues', 'queues'] },
    });
    expect(nodes(done)).toContain('summarize');
    const first = llm.calls.findIndex(isSummarizer);
    expect(first).toBeGreaterThan(0);
    const after = llm.calls[first + 1]!.messages;
    expect(after[0]!.content).toContain(`${ANCHOR_HEADING}\n${query}`);
    expect(after[0]!.content).toContain(`${SUMMARY_HEADING}\nSUMMARY: the queues expert`);
    expect(JSON.stringify(after)).not.toContain('Lead thinking 1');
    // The query is in the system message, not pinned a second time as a user message.
    expect(after.filter((message) => message.role === 'user' && message.content === query)).toHaveLength(0);
    expect(validateHistory(after)).toEqual([]);
    expect(validateHistory(done.messages)).toEqual([]);
  });

  it('memory.summarizeAt 0 turns the summariser off for one run', async () => {
    const llm = model(reflectScript());
    const done = await runInProcess(
      reflectGraph,
      { task: 'Explain a job queue.', maxIterations: 5, memory: { summarizeAt: 0 } },
      { services: services(llm) },
    );
    expect(done).toMatchObject({ status: 'completed', output: { iterations: 4 } });
    expect(llm.calls.filter(isSummarizer)).toHaveLength(0);
    expect(nodes(done)).not.toContain('summarize');
  });

  it('a memory option with both window and summarizeAt fails the run naming both, before any model call', async () => {
    const llm = model(() => 'never asked');
    const both = await runInProcess(
      multiAgentGraph,
      { query: 'q', experts: [{ name: 'a', description: 'anything' }], memory: { window: 4, summarizeAt: 0.5 } },
      { services: services(llm) },
    );
    expect(both.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/memory takes either window .* or summarizeAt/),
    });
    const range = await runInProcess(
      reflectGraph,
      { task: 't', memory: { summarizeAt: 2 } },
      { services: services(llm) },
    );
    expect(range.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('memory.summarizeAt must be a number from 0 to 1'),
    });
    expect(llm.calls).toHaveLength(0);
  });
});

describe('an interrupted turn as the next turn start (withoutOpenToolCalls)', () => {
  const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'calculator', arguments: '{}' } });
  const asked: Message[] = [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'Q1' },
    { role: 'assistant', content: '', tool_calls: [call('a'), call('b')] },
    { role: 'tool', tool_call_id: 'a', content: '2' },
  ];

  it('drops the last model turn whose tool calls were not all answered, keeps a history with every call answered', () => {
    expect(withoutOpenToolCalls(asked)).toEqual(asked.slice(0, 2));
    const answered: Message[] = [...asked, { role: 'tool', tool_call_id: 'b', content: '3' }];
    expect(withoutOpenToolCalls(answered)).toEqual(answered);
    expect(validateHistory(asked)).not.toEqual([]);
    expect(validateHistory(withoutOpenToolCalls(asked))).toEqual([]);
  });
});
