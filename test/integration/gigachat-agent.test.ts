import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contentText } from '../../shared/contracts/run-record.js';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { defineTool } from '../../shared/ports/define-tool.js';
import { testConfig, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';
import { startScriptedGigaChatServer, type ScriptedGigaChatServer } from '../fakes/scripted-gigachat-server.js';

const forecast = defineTool({
  name: 'forecast',
  description: 'Weather forecast for a city',
  input: z.object({ city: z.string(), days: z.number().int().min(1).default(1) }),
  examples: [{ request: 'Will it rain in Kazan over the next 3 days?', params: { city: 'Kazan', days: 3 } }],
  execute: ({ city, days }) => ({ city, days, outlook: 'sunny' }),
});

/** react-agent end to end on GigaChat: client → queue → worker → GigaChat adapter → scripted GigaChat server over HTTP. */
describe('react-agent on GigaChat', () => {
  let server: ScriptedGigaChatServer;
  let env: TestEnv;
  beforeAll(async () => {
    server = await startScriptedGigaChatServer();
    env = await startTestEnv({
      tools: [forecast],
      env: {
        LLM_PROVIDER: 'gigachat',
        LLM_MODEL: 'GigaChat-2-Max',
        GIGACHAT_AUTH_KEY: server.authKey,
        GIGACHAT_AUTH_URL: server.authUrl,
        GIGACHAT_BASE_URL: server.baseUrl,
      },
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });
  beforeEach(() => server.reset());

  const run = async (input: unknown) => {
    const queued = await env.client.enqueue({ graph: 'react-agent', input });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('answers with one tool call: function_call → tool → function result with its state id → answer, history valid', async () => {
    server.setScript([
      { functionCall: { name: 'calculator', arguments: { expression: '2^10' } }, stateId: 'state-calc-1' },
      { content: '2^10 is 1024.' },
    ]);
    const done = await run({ query: 'what is 2^10?', tools: ['calculator', 'forecast'] });
    expect(done).toMatchObject({ status: 'completed', output: { answer: '2^10 is 1024.' } });

    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(history[2]!.tool_calls).toEqual([
      {
        id: 'gigachat-state-state-calc-1',
        type: 'function',
        function: { name: 'calculator', arguments: '{"expression":"2^10"}' },
      },
    ]);
    expect(history[3]).toEqual({
      role: 'tool',
      tool_call_id: 'gigachat-state-state-calc-1',
      content: JSON.stringify({ expression: '2^10', result: 1024 }),
    });

    const [first, second] = server.chatRequests();
    expect(server.chatRequests()).toHaveLength(2);
    expect(first!.body).toMatchObject({ model: 'GigaChat-2-Max', stream: true, function_call: 'auto' });
    expect(first!.body.functions).toEqual([
      expect.objectContaining({ name: 'calculator', parameters: expect.objectContaining({ type: 'object' }) }),
      {
        name: 'forecast',
        description: 'Weather forecast for a city',
        parameters: forecast.parameters,
        few_shot_examples: [
          { request: 'Will it rain in Kazan over the next 3 days?', params: { city: 'Kazan', days: 3 } },
        ],
      },
    ]);
    expect((second!.body.messages as unknown[]).slice(2)).toEqual([
      {
        role: 'assistant',
        content: '',
        function_call: { name: 'calculator', arguments: { expression: '2^10' } },
        functions_state_id: 'state-calc-1',
      },
      { role: 'function', name: 'calculator', content: JSON.stringify({ expression: '2^10', result: 1024 }) },
    ]);
    // One token for the whole run, fetched with the key; never refused.
    expect(server.oauthRequests()).toHaveLength(1);
    expect(server.refusedTokens()).toBe(0);
    const steps = await env.client.steps(done.id);
    expect(steps.map((step) => [step.superstep, step.node])).toEqual([
      [0, 'model'],
      [1, 'tool'],
      [2, 'model'],
    ]);
    expect(steps[0]!.usage?.model).toBe('GigaChat-2-Max:2.0.28.2');
  });

  it('runs two rounds of tools, one call per reply, each result answering its own call', async () => {
    server.setScript([
      { functionCall: { name: 'forecast', arguments: { city: 'Kazan', days: 2 } }, stateId: 'state-a' },
      { functionCall: { name: 'calculator', arguments: { expression: '3*7' } }, stateId: 'state-b' },
      { content: 'Sunny in Kazan; 3*7 is 21.' },
    ]);
    const done = await run({ query: 'weather in Kazan, and 3*7', tools: ['calculator', 'forecast'] });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Sunny in Kazan; 3*7 is 21.' } });
    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    expect(JSON.parse(contentText(history[3]!.content))).toEqual({ city: 'Kazan', days: 2, outlook: 'sunny' });
    const last = server.chatRequests()[2]!.body.messages as {
      role: string;
      functions_state_id?: string;
      name?: string;
    }[];
    expect(last.map((message) => [message.role, message.functions_state_id ?? message.name ?? null])).toEqual([
      ['system', null],
      ['user', null],
      ['assistant', 'state-a'],
      ['function', 'forecast'],
      ['assistant', 'state-b'],
      ['function', 'calculator'],
    ]);
  });

  it("a blacklisted request does not complete: the run fails MODEL_REFUSED with GigaChat's words", async () => {
    server.setScript([
      { content: 'Что-то в вашем вопросе меня смущает. Может, поговорим на другую тему?', finishReason: 'blacklist' },
    ]);
    const done = await run({ query: 'something GigaChat will not discuss' });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'MODEL_REFUSED', node: 'model' } });
    expect(done.error?.message).toContain('Может, поговорим на другую тему?');
  });
});

describe('tool examples on an OpenAI-compatible model', () => {
  const { server, env } = useAgentE2E({ tools: [forecast], env: { AGENTQ_TOOL_EXAMPLES_IN_DESCRIPTION: 'true' } });

  it('AGENTQ_TOOL_EXAMPLES_IN_DESCRIPTION writes them into the description the model reads', async () => {
    server.setScript([{ content: 'ok' }]);
    const queued = await env.client.enqueue({ graph: 'react-agent', input: { query: 'rain?', tools: ['forecast'] } });
    expect(await env.client.wait(queued.id, { timeoutMs: 30_000 })).toMatchObject({ status: 'completed' });
    const tools = server.chatRequests()[0]!.body.tools as { function: { description: string } }[];
    expect(tools[0]!.function.description).toBe(
      'Weather forecast for a city\n\nExamples (request → arguments):\n- "Will it rain in Kazan over the next 3 days?" → {"city":"Kazan","days":3}',
    );
  });
});

describe('GigaChat settings', () => {
  it('LLM_PROVIDER=gigachat without GIGACHAT_AUTH_KEY is refused at start-up', () => {
    expect(() => testConfig({ LLM_PROVIDER: 'gigachat', LLM_MODEL: 'GigaChat' })).toThrow(/GIGACHAT_AUTH_KEY/);
  });
});
