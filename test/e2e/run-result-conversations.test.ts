import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RunResult } from '../../shared/contracts/run-result.js';
import type { ModelCallInfo, ModelErrorEvent, ModelResponseEvent } from '../../worker/agents/llm/model-listeners.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';

const heard: { requests: ModelCallInfo[]; responses: ModelResponseEvent[]; errors: ModelErrorEvent[] } = {
  requests: [],
  responses: [],
  errors: [],
};

/**
 * Model listeners, the result object per run, and conversations read and cleared by
 * id (HTTP, client library, CLI), through the real openai SDK against the scripted server.
 */
describe('model listeners, run results and conversations by id', () => {
  let server: ScriptedOpenAIServer;
  let env: ApiTestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    env = await startApiTestEnv({
      env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'test-key', LLM_MODEL: 'scripted-chat' },
      services: {
        modelListeners: [
          {
            onRequest: (event) => void heard.requests.push(event),
            onResponse: (event) => void heard.responses.push(event),
            onError: (event) => void heard.errors.push(event),
          },
          // A listener that throws, and one whose promise rejects: neither touches the run.
          {
            onRequest: () => {
              throw new Error('listener bug');
            },
            onResponse: async () => Promise.reject(new Error('async listener bug')),
          },
        ],
      },
    });
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });
  beforeEach(() => {
    server.reset();
    heard.requests.length = 0;
    heard.responses.length = 0;
    heard.errors.length = 0;
  });

  const enqueue = (key: string, body: Record<string, unknown>) =>
    env.as(key, { method: 'POST', url: '/v1/runs', payload: body });
  const wait = (runId: string) => env.client.wait(runId, { timeoutMs: 30_000 });

  it('listeners hear each request with its payload, and its response or error object; a failing listener changes nothing', async () => {
    server.setScript([
      { status: 503, message: 'overloaded' },
      { toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] },
      { content: 'It is 42.' },
    ]);
    const queued = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: 'What is 6*7?', tools: ['calculator'] },
    });
    const done = await wait(queued.id);
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'It is 42.' } });

    expect(heard.requests).toHaveLength(3);
    expect(heard.requests[0]).toMatchObject({
      runId: queued.id,
      tenant: 'default',
      node: 'model',
      provider: 'openai',
      model: 'scripted-chat',
      request: { messages: [{ role: 'system' }, { role: 'user', content: 'What is 6*7?' }] },
    });
    expect(heard.requests[0]!.request.tools?.map((tool) => tool.name)).toEqual(['calculator']);
    expect(heard.errors).toHaveLength(1);
    expect(heard.errors[0]).toMatchObject({ callId: heard.requests[0]!.callId, attempt: 1 });
    expect(heard.errors[0]!.error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });
    expect(heard.responses.map((event) => event.response.finishReason)).toEqual(['tool_calls', 'stop']);
    expect(heard.responses[1]!.response.message).toEqual({ role: 'assistant', content: 'It is 42.' });
    expect(heard.responses[0]!.callId).toBe(heard.requests[1]!.callId);
  });

  it('a run has a result object: tool executions, intermediate responses, sources and the finish reason (library and HTTP)', async () => {
    server.setScript([
      {
        content: 'Let me compute both.',
        toolCalls: [
          { name: 'calculator', arguments: { expression: '2+2' } },
          { name: 'calculator', arguments: { expression: '3*3' } },
        ],
      },
      { content: 'Four and nine, and then I ran out of', finishReason: 'length' },
    ]);
    const response = await enqueue(KEYS.acmeProducer, {
      graph: 'react-agent',
      input: { query: 'Compute 2+2 and 3*3', tools: ['calculator'] },
    });
    expect(response.statusCode).toBe(202);
    const runId = response.json<{ id: string }>().id;
    expect((await wait(runId)).status).toBe('completed');

    const http = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${runId}/result` });
    expect(http.statusCode).toBe(200);
    const result = http.json<RunResult>();
    expect(result).toMatchObject({
      runId,
      status: 'completed',
      answer: 'Four and nine, and then I ran out of',
      finishReason: 'length',
      sources: [],
      toolExecutions: [
        {
          toolCallId: 'call_0_0',
          name: 'calculator',
          arguments: '{"expression":"2+2"}',
          result: expect.stringContaining('"result":4'),
        },
        {
          toolCallId: 'call_0_1',
          name: 'calculator',
          arguments: '{"expression":"3*3"}',
          result: expect.stringContaining('"result":9'),
        },
      ],
    });
    expect(result.intermediateResponses).toHaveLength(1);
    expect(result.intermediateResponses[0]).toMatchObject({ role: 'assistant', content: 'Let me compute both.' });
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(await env.client.result(runId)).toEqual(result);
    // Another tenant's run answers 404, as a missing one.
    const foreign = await env.as(KEYS.globexProducer, { method: 'GET', url: `/v1/runs/${runId}/result` });
    expect(foreign.statusCode).toBe(404);
    const cli = await runCli(['result', runId, '--json'], cliEnv(env.config));
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual(result);
  });

  it("a conversation turn's result leaves the earlier turns out", async () => {
    server.setScript([
      { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] },
      { content: 'Two.' },
      { content: 'You asked about 1+1.' },
    ]);
    const first = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: '1+1?', tools: ['calculator'] },
      conversationId: 'result-conv',
    });
    await wait(first.id);
    const second = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: 'What did I ask?', tools: ['calculator'] },
      conversationId: 'result-conv',
    });
    await wait(second.id);
    const result = await env.client.result(second.id);
    expect(result).toMatchObject({ answer: 'You asked about 1+1.', finishReason: 'stop', toolExecutions: [] });
    expect(result.intermediateResponses).toEqual([]);
  });

  it('a run with image parts: the messages route serves the parts and the run page shows them', async () => {
    server.setScript([{ content: 'A red square.' }]);
    // An address, not a name: this machine resolves no outside names, and image URLs are resolved (AGENTQ_CHECK_IMAGE_URLS).
    const image = { type: 'image_url', image_url: { url: 'https://93.184.215.14/square.png' } };
    const response = await enqueue(KEYS.acmeProducer, {
      graph: 'react-agent',
      input: { query: [{ type: 'text', text: 'What is this?' }, image], tools: [] },
    });
    const runId = response.json<{ id: string }>().id;
    expect((await wait(runId)).status).toBe('completed');
    const messages = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${runId}/messages` });
    expect(messages.statusCode).toBe(200);
    expect(messages.json().messages[1]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'What is this?' }, image],
    });
    const page = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/runs/${runId}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('What is this?\n[image https://93.184.215.14/square.png]');
  });

  it('POST /v1/runs refuses a bad onBusy with 400 naming the field', async () => {
    const unknown = await enqueue(KEYS.acmeProducer, {
      graph: 'react-agent',
      conversationId: 'c-400',
      onBusy: 'sometimes',
      input: { query: 'hi' },
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringContaining('onBusy') });
    const alone = await enqueue(KEYS.acmeProducer, { graph: 'react-agent', onBusy: 'queue', input: { query: 'hi' } });
    expect(alone.statusCode).toBe(400);
    expect(alone.json().error.message).toMatch(/onBusy: .*send conversationId with it/);
  });

  it('reads and clears a conversation by id in its tenant; a foreign id answers 404 like a missing one', async () => {
    server.setScript([{ content: 'Hello Ada.' }, { content: 'You are Ada.' }, { content: 'I do not know your name.' }]);
    const turn = async (query: string) => {
      const response = await enqueue(KEYS.acmeProducer, {
        graph: 'react-agent',
        conversationId: 'chat-42',
        input: { query, tools: [] },
      });
      return wait(response.json<{ id: string }>().id);
    };
    const one = await turn('I am Ada.');
    const two = await turn('Who am I?');

    const read = await env.as(KEYS.acmeProducer, { method: 'GET', url: '/v1/conversations/chat-42' });
    expect(read.statusCode).toBe(200);
    const conversation = read.json<{
      turns: { runId: string; status: string }[];
      latestCompletedRunId: string;
      messages: { role: string; content: string }[];
      activeRunIds: string[];
    }>();
    expect(conversation.turns.map((entry) => [entry.runId, entry.status])).toEqual([
      [one.id, 'completed'],
      [two.id, 'completed'],
    ]);
    expect(conversation.latestCompletedRunId).toBe(two.id);
    expect(conversation.activeRunIds).toEqual([]);
    expect(conversation.messages.map((message) => message.content).slice(1)).toEqual([
      'I am Ada.',
      'Hello Ada.',
      'Who am I?',
      'You are Ada.',
    ]);
    expect(await env.client.conversation('chat-42', { tenant: 'acme' })).toEqual(conversation);

    const foreign = await env.as(KEYS.globexProducer, { method: 'GET', url: '/v1/conversations/chat-42' });
    const missing = await env.as(KEYS.globexProducer, { method: 'GET', url: '/v1/conversations/never-was' });
    expect(foreign.statusCode).toBe(404);
    expect(missing.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('NOT_FOUND');
    expect(foreign.json().error.message).toBe(missing.json().error.message.replace('never-was', 'chat-42'));
    const foreignDelete = await env.as(KEYS.globexProducer, { method: 'DELETE', url: '/v1/conversations/chat-42' });
    expect(foreignDelete.statusCode).toBe(404);
    const bad = await env.as(KEYS.acmeProducer, { method: 'GET', url: '/v1/conversations/no%20spaces' });
    expect(bad.statusCode).toBe(400);

    // Cleared: the next turn starts afresh; the runs stay readable.
    const cleared = await env.as(KEYS.acmeProducer, { method: 'DELETE', url: '/v1/conversations/chat-42' });
    expect(cleared.statusCode).toBe(204);
    expect((await env.as(KEYS.acmeProducer, { method: 'GET', url: '/v1/conversations/chat-42' })).statusCode).toBe(404);
    expect((await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${two.id}` })).statusCode).toBe(200);
    const three = await turn('What is my name?');
    expect(three.status).toBe('completed');
    const prompt = server.chatRequests().at(-1)!.body.messages;
    expect(JSON.stringify(prompt)).not.toContain('Ada');
  });

  it('the CLI shows and clears a conversation', async () => {
    server.setScript([{ content: 'Noted.' }]);
    const input = JSON.stringify({ query: 'Remember 7.', tools: [] });
    const badMode = await runCli(
      ['run', 'react-agent', '--input', input, '--conversation', 'cli-conv', '--on-busy', 'sometimes'],
      cliEnv(env.config),
    );
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toMatch(/onBusy: onBusy must be one of "queue", "cancel", "reject"/);
    const ran = await runCli(
      ['run', 'react-agent', '--input', input, '--conversation', 'cli-conv', '--on-busy', 'queue', '--tenant', 'acme'],
      cliEnv(env.config),
    );
    expect(ran.code).toBe(0);
    const queued = { id: ran.stdout.trim() };
    await wait(queued.id);
    const shown = await runCli(['conversation', 'show', 'cli-conv', '--tenant', 'acme', '--json'], cliEnv(env.config));
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: 'cli-conv', latestCompletedRunId: queued.id });
    const text = await runCli(['conversation', 'show', 'cli-conv', '--tenant', 'acme'], cliEnv(env.config));
    expect(text.stdout).toContain('[user] Remember 7.');
    const clear = await runCli(['conversation', 'clear', 'cli-conv', '--tenant', 'acme'], cliEnv(env.config));
    expect(clear.code).toBe(0);
    const again = await runCli(['conversation', 'show', 'cli-conv', '--tenant', 'acme'], cliEnv(env.config));
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/NOT_FOUND: conversation cli-conv not found/);
  });
});
