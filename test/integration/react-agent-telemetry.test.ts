import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelemetry, type Telemetry } from '../../shared/telemetry/telemetry.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** GenAI spans (OpenTelemetry semantic conventions) as children of the step spans. */
describe('react-agent telemetry', () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: Telemetry;
  let server: ScriptedOpenAIServer;
  const envs: TestEnv[] = [];
  const script = () => [
    {
      toolCalls: [{ name: 'calculator', arguments: { expression: '3*3' } }],
      usage: { prompt_tokens: 120, completion_tokens: 12 },
    },
    { content: 'nine', usage: { prompt_tokens: 150, completion_tokens: 3 } },
  ];
  beforeAll(async () => {
    telemetry = await startTelemetry({ exporter });
    server = await startScriptedOpenAIServer();
  });
  afterAll(async () => {
    for (const env of envs) await env.close();
    await server.close();
    await telemetry.shutdown();
  });

  const runOnce = async (extraEnv: Record<string, string> = {}) => {
    const env = await startTestEnv({
      telemetry,
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', ...extraEnv },
    });
    envs.push(env);
    server.reset();
    server.setScript(script());
    const queued = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: 'what is 3*3?', tools: ['calculator'] },
    });
    const done = await env.client.wait(queued.id, { timeoutMs: 20_000 });
    expect(done.status).toBe('completed');
    const ofRun = () => {
      const steps = exporter.getFinishedSpans().filter((span) => span.attributes['agentq.run.id'] === done.id);
      const stepIds = new Set(steps.map((span) => span.spanContext().spanId));
      const children = exporter
        .getFinishedSpans()
        .filter((span) => span.parentSpanContext && stepIds.has(span.parentSpanContext.spanId));
      return { steps, children };
    };
    return eventually(async () => {
      const spans = ofRun();
      return spans.children.filter((span) => span.name.startsWith('chat ')).length === 2 && spans;
    });
  };
  const parentName = (span: ReadableSpan, steps: ReadableSpan[]) =>
    steps.find((step) => step.spanContext().spanId === span.parentSpanContext?.spanId)?.name;

  it('each model call is a chat span and each tool execution an execute_tool span, children of their step spans', async () => {
    const { steps, children } = await runOnce();
    const chats = children.filter((span) => span.name === 'chat scripted-chat');
    expect(chats).toHaveLength(2);
    for (const chat of chats) expect(parentName(chat, steps)).toBe('agent.step model');
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'scripted-chat',
      'gen_ai.response.model': 'scripted-chat',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 12,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });
    const tools = children.filter((span) => span.name === 'execute_tool calculator');
    expect(tools).toHaveLength(1);
    expect(parentName(tools[0]!, steps)).toBe('agent.step tool');
    expect(tools[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'calculator',
      'gen_ai.tool.call.id': 'call_0_0',
    });
    // Content stays out of traces unless AGENTQ_TRACE_CONTENT=true.
    for (const span of [...chats, ...tools]) {
      expect(Object.keys(span.attributes).filter((key) => /messages|arguments|result/.test(key))).toEqual([]);
    }
  });

  it('AGENTQ_TRACE_CONTENT=true records messages, tool arguments and results', async () => {
    const { children } = await runOnce({ AGENTQ_TRACE_CONTENT: 'true' });
    const chat = children.find((span) => span.name === 'chat scripted-chat')!;
    expect(String(chat.attributes['gen_ai.input.messages'])).toContain('what is 3*3?');
    expect(String(chat.attributes['gen_ai.output.messages'])).toContain('calculator');
    const tool = children.find((span) => span.name === 'execute_tool calculator')!;
    expect(tool.attributes['gen_ai.tool.call.arguments']).toBe('{"expression":"3*3"}');
    expect(tool.attributes['gen_ai.tool.call.result']).toBe('{"expression":"3*3","result":9}');
  });
});
