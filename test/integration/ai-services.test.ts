import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { type ScriptedChatRequest } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';
import { transfer } from '../helpers/agent-fixtures.js';

const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];

/**
 * AiServices parity on react-agent, through the real openai SDK against the scripted server: image parts over
 * HTTP and answers-only memory across a conversation. Templates, beforeToolCall and tool providers are tested
 * in test/unit/react-agent-services-logic.test.ts.
 */
describe('react-agent: images, answers-only memory', () => {
  const { server, env } = useAgentE2E({
    env: { OPENAI_API_KEY: 'test-key' },
    tools: [transfer],
  });

  const run = async (graph: string, input: unknown, extra: Record<string, unknown> = {}) => {
    const queued = await env.client.enqueue({ graph, input, ...extra });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('passes image content parts through to the model, and keeps them in the history', async () => {
    server.setScript([{ content: 'A cat on a mat.' }]);
    // An address, not a name: this machine resolves no outside names, and image URLs are resolved (AGENTQ_CHECK_IMAGE_URLS).
    const image = { type: 'image_url', image_url: { url: 'https://93.184.215.14/cat.png', detail: 'low' } };
    const inline = { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } };
    const done = await run('react-agent', {
      query: [{ type: 'text', text: 'What is in these pictures?' }, image, inline],
      tools: [],
    });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'A cat on a mat.' } });
    const sent = messagesOf(server.chatRequests()[0]!)[1]!;
    expect(sent).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'What is in these pictures?' }, image, inline],
    });
    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history[1]).toEqual(sent);
    // The HTTP-facing reads serve the same parts (the messages route's schema accepts them).
    expect(done.usage.inputTokens).toBeGreaterThan(0);
  });

  it('memory keep "answers": the next turn starts from the questions and final answers only', async () => {
    server.setScript([
      { toolCalls: [{ name: 'transfer', arguments: { to: 'bob', amount: 1 } }] },
      { content: 'Sent 1 to bob.' },
      { content: 'You sent 1.' },
    ]);
    const first = await run('react-agent', { query: 'Send bob 1' }, { conversationId: 'answers-1' });
    expect(first.status).toBe('completed');
    const second = await run(
      'react-agent',
      { query: 'How much did I send?', memory: { keep: 'answers' } },
      { conversationId: 'answers-1' },
    );
    expect(second.status).toBe('completed');
    const prompt = messagesOf(server.chatRequests()[2]!);
    expect(prompt.map((message) => [message.role, message.content])).toEqual([
      ['system', expect.stringMatching(/^You are a helpful assistant/)],
      ['user', 'Send bob 1'],
      ['assistant', 'Sent 1 to bob.'],
      ['user', 'How much did I send?'],
    ]);
    expect(validateHistory(prompt)).toEqual([]);
  });
});

/**
 * Image outputs: OpenAI's published chat-completions contract has none (only text, tool calls, refusals and
 * audio); compatible servers that make images send `message.images` of `image_url` parts. Kept as parts of
 * the run's output, streamed or not, instead of dropped.
 */
describe('react-agent: images the model returns', () => {
  const { server, env } = useAgentE2E({ env: { OPENAI_API_KEY: 'test-key' } });
  const images = [
    { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    { type: 'image_url' as const, image_url: { url: 'https://img.example/cat.webp' } },
  ];
  const parts = [
    { type: 'image', mimeType: 'image/png', b64: 'iVBORw0KGgo=' },
    { type: 'image', url: 'https://img.example/cat.webp' },
  ];

  it.each([
    ['streamed (delta.images)', false],
    ['as one JSON body', true],
  ])('keeps them as parts of the output: %s', async (_how, asJson) => {
    server.setScript([{ content: 'Here is a cat.', images, asJson }]);
    const queued = await env.client.enqueue({ graph: 'react-agent', input: { query: 'Draw a cat', tools: [] } });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Here is a cat.', images: parts } });
    expect(server.chatRequests()[0]!.body.stream).toBe(true);
  });
});
