import { beforeEach, describe, expect, it } from 'vitest';
import type { LanguageModelRequest } from '../../shared/ports/language-model.js';
import { MockLanguageModel, runInProcess } from '../../testing/index.js';
import { createReactAgentGraph, reactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { builtInTools } from '../../worker/agents/tools/built-in-tools.js';
import { ToolRegistry } from '../../worker/agents/tools/tool-registry.js';
import { providerCalls, topicTools, transfer, transfers } from '../helpers/agent-fixtures.js';

// react-agent's templates, input checks, beforeToolCall and tool providers on the in-process runner and a
// scripted model; the end-to-end file (test/integration/ai-services.test.ts) keeps image parts over HTTP and
// answers-only memory across a conversation's runs.

const templated = createReactAgentGraph({
  name: 'templated',
  templates: { system: 'You are {{persona}}.', user: 'Answer for {{audience}}: {{query}}' },
});
const guardedBank = createReactAgentGraph({
  name: 'guarded-bank',
  beforeToolCall: ({ arguments: args }) => {
    const { to, amount } = args as { to: string; amount: number };
    if (to === 'mallory') return { action: 'veto', message: `Transfers to ${to} are not allowed.` };
    if (amount > 100) return { action: 'rewrite', arguments: { to, amount: 100 } };
    return undefined;
  },
});
const providedTools = createReactAgentGraph({ name: 'provided-tools', toolProvider: topicTools });

const services = (languageModel: MockLanguageModel) => ({
  languageModel,
  tools: new ToolRegistry([...builtInTools(), transfer]),
});
const toolNamesOf = (request: LanguageModelRequest) => (request.tools ?? []).map((tool) => tool.name);

describe('react-agent: templates, beforeToolCall, tool providers', () => {
  beforeEach(() => {
    transfers.length = 0;
    providerCalls.length = 0;
  });

  it('fills {{variables}} in the graph templates and in a run’s own query and system', async () => {
    const llm = new MockLanguageModel({ generate: ['Arr, salt from rocks.', 'Hi Ada.', 'Literal.'] });
    const templatedRun = await runInProcess(
      templated,
      { query: 'Why is the sea salty?', variables: { persona: 'a pirate', audience: 'kids' } },
      { services: services(llm) },
    );
    expect(templatedRun.status).toBe('completed');
    expect(llm.calls[0]!.messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'You are a pirate.' },
      { role: 'user', content: 'Answer for kids: Why is the sea salty?' },
    ]);
    await runInProcess(
      reactAgentGraph,
      { query: 'Greet {{name}}', system: 'Be brief with {{name}}.', variables: { name: 'Ada' }, tools: [] },
      { services: services(llm) },
    );
    expect(llm.calls[1]!.messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'Be brief with Ada.' },
      { role: 'user', content: 'Greet Ada' },
    ]);
    // Without variables, braces are plain text.
    await runInProcess(
      reactAgentGraph,
      { query: 'What does {{x}} mean in Mustache?', tools: [] },
      { services: services(llm) },
    );
    expect(llm.calls[2]!.messages[1]!.content).toBe('What does {{x}} mean in Mustache?');
  });

  it('refuses a template variable with no value, or an image URL that is not http(s) or data:, before any model call', async () => {
    const llm = new MockLanguageModel();
    const own = await runInProcess(
      reactAgentGraph,
      { query: 'Greet {{name}}', variables: { other: 'x' }, tools: [] },
      { services: services(llm) },
    );
    expect(own).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(own.error?.message).toMatch(/input\.variables\.name: query uses \{\{name\}\} but variables has no value/);
    const graphTemplate = await runInProcess(
      templated,
      { query: 'Why?', variables: { audience: 'kids' } },
      { services: services(llm) },
    );
    expect(graphTemplate).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(graphTemplate.error?.message).toMatch(/the system template uses \{\{persona\}\}/);
    const image = await runInProcess(
      reactAgentGraph,
      {
        query: [
          { type: 'text', text: 'Look' },
          { type: 'image_url', image_url: { url: 'file:///etc/passwd' } },
        ],
        tools: [],
      },
      { services: services(llm) },
    );
    expect(image).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(image.error?.message).toMatch(
      /input\.query\.1\.image_url\.url: url must be an http:\/\/, https:\/\/ or data:image/,
    );
    expect(llm.calls).toHaveLength(0);
  });

  it('beforeToolCall sees the arguments and may veto or rewrite the call', async () => {
    const llm = new MockLanguageModel({
      generate: [
        {
          toolCalls: [
            { name: 'transfer', arguments: { to: 'bob', amount: 50 } },
            { name: 'transfer', arguments: { to: 'mallory', amount: 10 } },
            { name: 'transfer', arguments: { to: 'carol', amount: 5000 } },
          ],
        },
        'Done.',
      ],
    });
    const done = await runInProcess(
      guardedBank,
      { query: 'Pay everyone', tools: ['transfer'] },
      { services: services(llm) },
    );
    expect(done.status).toBe('completed');
    // Vetoed: never ran; rewritten: ran with the hook's arguments.
    expect(transfers.sort((a, b) => a.to.localeCompare(b.to))).toEqual([
      { to: 'bob', amount: 50 },
      { to: 'carol', amount: 100 },
    ]);
    expect(
      llm.calls[1]!.messages.filter((message) => message.role === 'tool').map((message) => message.content),
    ).toEqual([
      JSON.stringify({ sent: 50, to: 'bob' }),
      'Transfers to mallory are not allowed.',
      JSON.stringify({ sent: 100, to: 'carol' }),
    ]);
  });

  it('a tool provider chooses the tools of each run from its input, beside the fixed ones', async () => {
    const llm = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'weather', arguments: { city: 'Oslo' } }] }, 'Sunny.', 'Forty-two.'],
    });
    const first = await runInProcess(
      providedTools,
      { query: 'What is the weather in Oslo?', tools: ['transfer'] },
      { services: services(llm), runId: 'run-weather' },
    );
    expect(first).toMatchObject({ status: 'completed', output: { answer: 'Sunny.' } });
    expect(toolNamesOf(llm.calls[0]!)).toEqual(['transfer', 'weather']);
    expect(llm.calls[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'Sunny in Oslo' });
    const second = await runInProcess(
      providedTools,
      { query: 'Price of ACME?', tools: ['transfer'] },
      { services: services(llm) },
    );
    expect(second.status).toBe('completed');
    expect(toolNamesOf(llm.calls[2]!)).toEqual(['transfer', 'stocks']);
    expect(providerCalls[0]).toMatchObject({
      runId: 'run-weather',
      tenant: 'default',
      input: { query: 'What is the weather in Oslo?', tools: ['transfer'] },
    });
  });

  it('a tool provider that throws fails only its run, with TOOL_ERROR naming it', async () => {
    const llm = new MockLanguageModel({ generate: 'fine' });
    const broken = await runInProcess(providedTools, { query: 'BROKEN please' }, { services: services(llm) });
    expect(broken).toMatchObject({
      status: 'failed',
      error: { code: 'TOOL_ERROR', details: { toolProvider: 'topicTools' } },
    });
    expect(broken.error?.message).toMatch(
      /tool provider 'topicTools' failed for this run's input: the tool catalogue is down/,
    );
    expect(llm.calls).toHaveLength(0);
    const next = await runInProcess(providedTools, { query: 'Price of ACME?' }, { services: services(llm) });
    expect(next.status).toBe('completed');
  });
});
