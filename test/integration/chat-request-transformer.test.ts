import { describe, expect, it } from 'vitest';
import { contentText, type Message } from '../../shared/contracts/run-record.js';
import { createMultiAgentGraph } from '../../worker/agents/graphs/multi-agent.js';
import { createReactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { createReflectGraph } from '../../worker/agents/graphs/reflect.js';
import type { ChatRequestInfo, ChatRequestTransformer } from '../../worker/agents/llm/chat-request-transformer.js';
import type { ScriptedChatRequest } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';

const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];
const systemTexts = (messages: readonly Message[]) =>
  messages.filter((message) => message.role === 'system').map((message) => contentText(message.content));

/** The worker's transformer: names the conversation in a first system message and sets the temperature. */
const seen: ChatRequestInfo[] = [];
const workerTransformer: ChatRequestTransformer = (request, info) => {
  seen.push(info);
  return {
    ...request,
    messages: [{ role: 'system', content: `Conversation: ${info.conversationId ?? 'none'}` }, ...request.messages],
    temperature: 0.25,
  };
};
/** A graph's transformer (async): a system message at the end and a token limit; the worker's runs after it. */
const graphTransformer: ChatRequestTransformer = async (request) => ({
  ...request,
  messages: [...request.messages, { role: 'system', content: 'Answer in French.' }],
  maxTokens: 77,
});

/**
 * chatRequestTransformer through a real worker, the real openai SDK and the scripted server: what the server
 * receives is the transformed request, the recording holds it, a replay asks it again (same) and a fork sends it again.
 */
describe('chatRequestTransformer', () => {
  const { server, env } = useAgentE2E({
    env: { OPENAI_API_KEY: 'test-key' },
    services: { chatRequestTransformer: workerTransformer },
    graphs: [
      createReactAgentGraph({ name: 'react-transformed', chatRequestTransformer: graphTransformer }),
      createReactAgentGraph({
        name: 'react-throws',
        chatRequestTransformer: () => {
          throw new Error('no template for this tenant');
        },
      }),
      createReactAgentGraph({
        name: 'react-returns-nothing',
        chatRequestTransformer: () => undefined as never,
      }),
      createReflectGraph({ name: 'reflect-transformed', chatRequestTransformer: graphTransformer }),
      createMultiAgentGraph({ name: 'multi-transformed', recall: 'first', chatRequestTransformer: graphTransformer }),
    ],
  });

  const run = async (graph: string, input: unknown, extra: Record<string, unknown> = {}) => {
    const queued = await env.client.enqueue({ graph, input, ...extra });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('the server receives the transformed request (graph transformer first, then the worker’s); the history keeps the untransformed turn', async () => {
    server.setScript([{ content: 'Bonjour.' }]);
    seen.length = 0;
    const done = await run('react-transformed', { query: 'Say hello', tools: [] });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Bonjour.' } });
    const [request] = server.chatRequests();
    const sent = messagesOf(request!);
    expect(sent.map((message) => [message.role, contentText(message.content)])).toEqual([
      ['system', 'Conversation: none'],
      ['system', expect.stringMatching(/^You are a helpful assistant/)],
      ['user', 'Say hello'],
      ['system', 'Answer in French.'],
    ]);
    expect(request!.body.temperature).toBe(0.25);
    expect(request!.body.max_tokens ?? request!.body.max_completion_tokens).toBe(77);
    expect(seen).toEqual([
      expect.objectContaining({ runId: done.id, node: 'model', call: 'model', stepId: 's0.t0', tenant: 'default' }),
    ]);
    // Only the request is rewritten: the run's history is what the agent wrote.
    expect(systemTexts(await env.client.messages(done.id))).toEqual([expect.stringMatching(/^You are a helpful/)]);

    // The recording holds the transformed request.
    const recordings = env.worker.store.recordings;
    const recorded = await recordings.call(done.id, 's0.t0', 'model');
    expect(recorded).not.toBeNull();
    const asked = (await recordings.expand(done.id, recorded!.request)) as {
      messages: Message[];
      temperature: number;
      maxTokens: number;
    };
    expect(asked.temperature).toBe(0.25);
    expect(asked.maxTokens).toBe(77);
    expect(asked.messages.map((message) => contentText(message.content))).toEqual(
      sent.map((message) => contentText(message.content)),
    );

    // A replay runs the transformers again and asks the recorded request: the same, with nothing sent.
    const replay = await env.client.replay(done.id);
    await env.client.wait(replay.id, { timeoutMs: 30_000 });
    expect(await env.client.replayReport(replay.id)).toMatchObject({ outcome: 'same', diverged: false });
    expect(server.chatRequests()).toHaveLength(1);

    // A fork from the model step sends it again: the same body reaches the server.
    server.setScript([{ content: 'Bonjour encore.' }]);
    const fork = await env.client.fork(done.id, { from: 0 });
    expect(await env.client.wait(fork.id, { timeoutMs: 30_000 })).toMatchObject({ status: 'completed' });
    expect(server.chatRequests()).toHaveLength(2);
    expect(server.chatRequests()[1]!.body).toEqual(request!.body);
  });

  it('varies by conversation: the transformer gets the run’s conversationId', async () => {
    server.setScript([{ content: 'One.' }, { content: 'Two.' }]);
    seen.length = 0;
    const first = await run('react-agent', { query: 'First?', tools: [] }, { conversationId: 'conv-a' });
    const second = await run('react-agent', { query: 'Second?', tools: [] }, { conversationId: 'conv-b' });
    expect([first.status, second.status]).toEqual(['completed', 'completed']);
    expect(server.chatRequests().map((request) => systemTexts(messagesOf(request))[0])).toEqual([
      'Conversation: conv-a',
      'Conversation: conv-b',
    ]);
    expect(seen.map((info) => info.conversationId)).toEqual(['conv-a', 'conv-b']);
  });

  it('a transformer that throws, or returns no request, fails the step with CHAT_REQUEST_TRANSFORM_FAILED before anything is sent', async () => {
    server.setScript([{ content: 'never sent' }]);
    const thrown = await run('react-throws', { query: 'Hi', tools: [] });
    expect(thrown).toMatchObject({
      status: 'failed',
      error: {
        code: 'CHAT_REQUEST_TRANSFORM_FAILED',
        retryable: false,
        message: expect.stringContaining('no template for this tenant'),
        details: { node: 'model', call: 'model' },
      },
    });
    const empty = await run('react-returns-nothing', { query: 'Hi', tools: [] });
    expect(empty).toMatchObject({ status: 'failed', error: { code: 'CHAT_REQUEST_TRANSFORM_FAILED' } });
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('reflect and multi-agent: every model call (writer, judge, lead, expert) goes through both transformers', async () => {
    server.setScript((request) =>
      request.body.response_format
        ? { content: JSON.stringify({ approved: true, critique: '' }) }
        : { content: 'Done.' },
    );
    const reflected = await run('reflect-transformed', { task: 'One line about queues.' });
    expect(reflected).toMatchObject({ status: 'completed', output: { approved: true } });
    const consulted = await run('multi-transformed', {
      query: 'How should retries work?',
      experts: [
        { name: 'queues', description: 'Job queues and retries' },
        { name: 'redis', description: 'Redis persistence' },
      ],
    });
    expect(consulted).toMatchObject({ status: 'completed', output: { answer: 'Done.' } });
    const requests = server.chatRequests();
    expect(requests.length).toBeGreaterThanOrEqual(3);
    for (const request of requests) {
      const texts = systemTexts(messagesOf(request));
      expect(texts[0]).toBe('Conversation: none');
      expect(texts.at(-1)).toBe('Answer in French.');
      expect(request.body.temperature).toBe(0.25);
    }
  });
});
