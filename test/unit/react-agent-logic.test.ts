import { describe, expect, it } from 'vitest';
import { MockLanguageModel, runInProcess } from '../../testing/index.js';
import { reactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { ToolRegistry } from '../../worker/agents/tools/tool-registry.js';
import { builtInTools } from '../../worker/agents/tools/built-in-tools.js';

// The react agent's own logic on the in-process runner and a scripted model; the end-to-end file
// (test/integration/react-agent.test.ts) keeps what needs the engine, the HTTP adapter and Redis.
const services = (languageModel: MockLanguageModel) => ({ languageModel, tools: new ToolRegistry(builtInTools()) });

describe('react-agent logic', () => {
  it('a refusal fails the run with MODEL_REFUSED and the refusal in the message', async () => {
    const llm = new MockLanguageModel({ generate: { refusal: 'I cannot help with that.' } });
    const result = await runInProcess(reactAgentGraph, { query: 'hi' }, { services: services(llm) });
    expect(result.status).toBe('failed');
    expect(result.error).toMatchObject({ code: 'MODEL_REFUSED' });
    expect(result.error?.message).toContain('I cannot help with that.');
  });

  it('an unknown tool reaches the model as a tool message, and the run completes', async () => {
    const llm = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'fly', arguments: {} }] }, 'I cannot fly.'],
    });
    const result = await runInProcess(reactAgentGraph, { query: 'fly' }, { services: services(llm) });
    expect(result.status).toBe('completed');
    const toolMessage = llm.calls[1]!.messages.find((message) => message.role === 'tool');
    expect(String(toolMessage?.content)).toMatch(/fly/);
    expect(JSON.stringify(result.output)).toContain('I cannot fly.');
  });
});
