import { contentText } from '../../shared/contracts/run-record.js';
import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { SUMMARY_HEADING } from '../../worker/runtime/memory/prompt-history.js';
import { SUMMARIZER_SYSTEM_PROMPT } from '../../worker/agents/memory/summarize-history.js';
import type { TextMessage as Message } from '../../shared/contracts/run-record.js';
import { startWorker, type AgentWorker } from '../../worker/start-worker.js';
import { type ScriptedChatRequest, type ScriptedResponse } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';

const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];
const isSummarizer = (request: ScriptedChatRequest) => messagesOf(request)[0]?.content === SUMMARIZER_SYSTEM_PROMPT;
const QUERY = 'Add the numbers one by one and tell me when you are done.';

/**
 * An agent that thinks aloud (~90 tokens per step) and calls the calculator `rounds` times, then answers;
 * the summariser answers with a fixed summary.
 */
function talkativeAgent(rounds: number, final = 'All done: 21.') {
  let step = 0;
  return (request: ScriptedChatRequest): ScriptedResponse => {
    if (isSummarizer(request))
      return { content: 'SUMMARY: the user wants numbers added one by one; partial sums so far are correct.' };
    const current = step++;
    if (current >= rounds) return { content: final };
    const thinking =
      `Thinking step ${current}: ` +
      'I will carefully add the next number to the running total and check the result. '.repeat(5);
    return {
      content: thinking,
      toolCalls: [{ name: 'calculator', arguments: { expression: `${current}+${current + 1}` } }],
    };
  };
}

describe('memory: summarisation and conversations', () => {
  const { server, env } = useAgentE2E({
    env: {
      AGENTQ_CONTEXT_WINDOW: '1000',
      AGENTQ_SUMMARIZE_AT: '0.5',
    },
  });

  const run = async (input: unknown, extra: { conversationId?: string; tenant?: string } = {}, client = env.client) => {
    const queued = await client.enqueue({ graph: 'react-agent', input, ...extra });
    return client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it("summarises as its own step, and the conversation's next turn starts from the summary", async () => {
    server.setScript(talkativeAgent(7));
    const done = await run({ query: QUERY, tools: ['calculator'] }, { conversationId: 'long-1' });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'All done: 21.' } });

    const steps = await env.client.steps(done.id);
    const summarizeSteps = steps.filter((step) => step.node === 'summarize');
    expect(summarizeSteps.length).toBeGreaterThanOrEqual(1);
    for (const summarize of summarizeSteps) {
      // The model step before it only decided: it sent nothing (no usage) and appended nothing.
      const before = steps[steps.indexOf(summarize) - 1]!;
      expect(before.node).toBe('model');
      expect(before.usage).toBeUndefined();
      expect(summarize.usage).toMatchObject({ model: 'scripted-chat' });
    }

    // What each prompt holds after a summary is tested in test/unit/memory-logic.test.ts.
    expect(server.chatRequests().some(isSummarizer)).toBe(true);

    // The stored history is the complete, valid audit log: nothing was replaced or inserted.
    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history.filter((message) => message.role === 'tool')).toHaveLength(7);
    expect(history.some((message) => contentText(message.content).includes(SUMMARY_HEADING))).toBe(false);

    // The next turn of this conversation starts from the summary, not from the summarised messages.
    server.reset();
    server.setScript([{ content: 'The total was 21.' }]);
    const next = await run({ query: 'What was the total?' }, { conversationId: 'long-1' });
    expect(next).toMatchObject({ status: 'completed', output: { answer: 'The total was 21.' } });
    const continued = messagesOf(server.chatRequests()[0]!);
    expect(validateHistory(continued)).toEqual([]);
    expect(continued[0]!.content).toContain(SUMMARY_HEADING);
    expect(continued.filter((message) => message.role === 'system')).toHaveLength(1);
    expect(JSON.stringify(continued)).not.toContain('Thinking step 0');
    expect(continued.at(-2)).toEqual({ role: 'assistant', content: 'All done: 21.' });
    expect(continued.at(-1)).toEqual({ role: 'user', content: 'What was the total?' });
  });

  it('a conversation continues on another worker after the first one stopped', async () => {
    server.setScript([{ content: 'Nice to meet you, Ada.' }]);
    const first = await run({ query: 'My name is Ada.' }, { conversationId: 'chat-7' });
    expect(first.status).toBe('completed');

    await env.worker.close();
    let replacement: AgentWorker | undefined;
    try {
      replacement = await startWorker({ config: env.config, logger: createLogger('silent'), reconciler: false });
      server.reset();
      server.setScript([{ content: 'Your name is Ada.' }, { content: 'I do not know your name.' }]);
      const second = await run({ query: 'What is my name?' }, { conversationId: 'chat-7' });
      expect(second).toMatchObject({ status: 'completed', output: { answer: 'Your name is Ada.' } });
      const sent = messagesOf(server.chatRequests()[0]!);
      expect(sent.map((message) => [message.role, message.content])).toEqual([
        ['system', expect.stringMatching(/^You are a helpful assistant/)],
        ['user', 'My name is Ada.'],
        ['assistant', 'Nice to meet you, Ada.'],
        ['user', 'What is my name?'],
      ]);
      // The new run's own history holds the whole conversation so far, so the next turn continues from it.
      expect((await env.client.messages(second.id)).map((message) => message.content)).toEqual([
        expect.any(String),
        'My name is Ada.',
        'Nice to meet you, Ada.',
        'What is my name?',
        'Your name is Ada.',
      ]);

      // The same conversation id in another tenant is another conversation.
      const foreign = await run({ query: 'What is my name?' }, { conversationId: 'chat-7', tenant: 'other-tenant' });
      expect(foreign.status).toBe('completed');
      expect(messagesOf(server.chatRequests()[1]!).map((message) => message.role)).toEqual(['system', 'user']);
    } finally {
      await replacement?.close();
    }
  });

  it('rejects an invalid conversation id at the door', async () => {
    await expect(
      env.client.enqueue({ graph: 'react-agent', input: { query: 'hi' }, conversationId: 'no spaces allowed' }),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(/conversationId must be 1-128 characters/),
    });
  });
});
