import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { defineTool } from '../../shared/ports/define-tool.js';
import { createReactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import type { ToolProviderRequest } from '../../worker/agents/tools/tool-provider.js';
import { type ScriptedChatRequest } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';

const messagesOf = (request: ScriptedChatRequest) => request.body.messages as unknown as Message[];
const toolNamesOf = (request: ScriptedChatRequest) =>
  (request.body.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);

const transfers: { to: string; amount: number }[] = [];
const transfer = defineTool({
  name: 'transfer',
  description: 'Transfers money',
  input: z.object({ to: z.string(), amount: z.number() }),
  execute: ({ to, amount }) => {
    transfers.push({ to, amount });
    return { sent: amount, to };
  },
});

const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny in ${city}`,
});
const stocks = defineTool({
  name: 'stocks',
  description: 'A stock price',
  input: z.object({ symbol: z.string() }),
  execute: ({ symbol }) => `${symbol}: 42`,
});
const providerCalls: ToolProviderRequest[] = [];

/** AiServices parity on react-agent, through the real openai SDK against the scripted server. */
describe('react-agent: templates, images, beforeToolCall, tool provider, answers-only memory', () => {
  const { server, env } = useAgentE2E({
    env: { OPENAI_API_KEY: 'test-key' },
    tools: [transfer],
    graphs: [
      createReactAgentGraph({
        name: 'templated',
        templates: { system: 'You are {{persona}}.', user: 'Answer for {{audience}}: {{query}}' },
      }),
      createReactAgentGraph({
        name: 'guarded-bank',
        beforeToolCall: ({ call, arguments: args }) => {
          const { to, amount } = args as { to: string; amount: number };
          if (to === 'mallory') return { action: 'veto', message: `Transfers to ${to} are not allowed.` };
          if (amount > 100) return { action: 'rewrite', arguments: { to, amount: 100 } };
          expect(call.function.name).toBe('transfer');
          return undefined;
        },
      }),
      createReactAgentGraph({
        name: 'provided-tools',
        toolProvider: function topicTools(request) {
          providerCalls.push(request);
          const query = String((request.input as { query: string }).query);
          if (query.includes('BROKEN')) throw new Error('the tool catalogue is down');
          return query.includes('weather') ? [weather] : [stocks];
        },
      }),
    ],
  });
  beforeEach(() => {
    transfers.length = 0;
    providerCalls.length = 0;
  });

  const run = async (graph: string, input: unknown, extra: Record<string, unknown> = {}) => {
    const queued = await env.client.enqueue({ graph, input, ...extra });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('fills {{variables}} in the graph templates and in a run’s own query and system', async () => {
    server.setScript([{ content: 'Arr, salt from rocks.' }, { content: 'Hi Ada.' }, { content: 'Literal.' }]);
    const templated = await run('templated', {
      query: 'Why is the sea salty?',
      variables: { persona: 'a pirate', audience: 'kids' },
    });
    expect(templated.status).toBe('completed');
    expect(messagesOf(server.chatRequests()[0]!).slice(0, 2)).toEqual([
      { role: 'system', content: 'You are a pirate.' },
      { role: 'user', content: 'Answer for kids: Why is the sea salty?' },
    ]);

    await run('react-agent', {
      query: 'Greet {{name}}',
      system: 'Be brief with {{name}}.',
      variables: { name: 'Ada' },
      tools: [],
    });
    expect(messagesOf(server.chatRequests()[1]!).slice(0, 2)).toEqual([
      { role: 'system', content: 'Be brief with Ada.' },
      { role: 'user', content: 'Greet Ada' },
    ]);
    // Without variables, braces are plain text.
    await run('react-agent', { query: 'What does {{x}} mean in Mustache?', tools: [] });
    expect(messagesOf(server.chatRequests()[2]!)[1]!.content).toBe('What does {{x}} mean in Mustache?');
  });

  it('refuses a template variable with no value, naming it, before any model call', async () => {
    const own = await run('react-agent', { query: 'Greet {{name}}', variables: { other: 'x' }, tools: [] });
    expect(own).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(own.error?.message).toMatch(/input\.variables\.name: query uses \{\{name\}\} but variables has no value/);
    const graphTemplate = await run('templated', { query: 'Why?', variables: { audience: 'kids' } });
    expect(graphTemplate).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(graphTemplate.error?.message).toMatch(/the system template uses \{\{persona\}\}/);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('passes image content parts through to the model, and keeps them in the history', async () => {
    server.setScript([{ content: 'A cat on a mat.' }]);
    const image = { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } };
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

  it('refuses an image URL that is not http(s) or data:, naming the field', async () => {
    const done = await run('react-agent', {
      query: [
        { type: 'text', text: 'Look' },
        { type: 'image_url', image_url: { url: 'file:///etc/passwd' } },
      ],
      tools: [],
    });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(done.error?.message).toMatch(
      /input\.query\.1\.image_url\.url: url must be an http:\/\/, https:\/\/ or data:image/,
    );
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('beforeToolCall sees the arguments and may veto or rewrite the call', async () => {
    server.setScript([
      {
        toolCalls: [
          { name: 'transfer', arguments: { to: 'bob', amount: 50 } },
          { name: 'transfer', arguments: { to: 'mallory', amount: 10 } },
          { name: 'transfer', arguments: { to: 'carol', amount: 5000 } },
        ],
      },
      { content: 'Done.' },
    ]);
    const done = await run('guarded-bank', { query: 'Pay everyone', tools: ['transfer'] });
    expect(done.status).toBe('completed');
    // Vetoed: never ran; rewritten: ran with the hook's arguments.
    expect(transfers.sort((a, b) => a.to.localeCompare(b.to))).toEqual([
      { to: 'bob', amount: 50 },
      { to: 'carol', amount: 100 },
    ]);
    const results = messagesOf(server.chatRequests()[1]!).filter((message) => message.role === 'tool');
    expect(results.map((message) => message.content)).toEqual([
      JSON.stringify({ sent: 50, to: 'bob' }),
      'Transfers to mallory are not allowed.',
      JSON.stringify({ sent: 100, to: 'carol' }),
    ]);
  });

  it('a tool provider chooses the tools of each run from its input, beside the fixed ones', async () => {
    server.setScript([
      { toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] },
      { content: 'Sunny.' },
      { content: 'Forty-two.' },
    ]);
    const first = await run('provided-tools', { query: 'What is the weather in Oslo?', tools: ['transfer'] });
    expect(first).toMatchObject({ status: 'completed', output: { answer: 'Sunny.' } });
    expect(toolNamesOf(server.chatRequests()[0]!)).toEqual(['transfer', 'weather']);
    expect(messagesOf(server.chatRequests()[1]!).at(-1)).toMatchObject({ role: 'tool', content: 'Sunny in Oslo' });
    const second = await run('provided-tools', { query: 'Price of ACME?', tools: [] });
    expect(second.status).toBe('completed');
    expect(toolNamesOf(server.chatRequests()[2]!)).toEqual(['stocks']);
    expect(providerCalls[0]).toMatchObject({
      runId: first.id,
      tenant: 'default',
      input: { query: 'What is the weather in Oslo?', tools: ['transfer'] },
    });
  });

  it('a tool provider that throws fails only its run, with TOOL_ERROR naming it', async () => {
    server.setScript([{ content: 'fine' }]);
    const broken = await run('provided-tools', { query: 'BROKEN please' });
    expect(broken).toMatchObject({
      status: 'failed',
      error: { code: 'TOOL_ERROR', details: { toolProvider: 'topicTools' } },
    });
    expect(broken.error?.message).toMatch(
      /tool provider 'topicTools' failed for this run's input: the tool catalogue is down/,
    );
    expect(server.chatRequests()).toHaveLength(0);
    // The worker goes on: the next run of the same graph completes.
    const next = await run('provided-tools', { query: 'Price of ACME?' });
    expect(next.status).toBe('completed');
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
