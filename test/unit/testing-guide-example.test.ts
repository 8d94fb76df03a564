import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defineGraph, channel, START, END, type Message } from '../../index.js';
import { MockLanguageModel, runInProcess } from '../../testing/index.js';

// Your graph: a model step that may ask for the `add` tool, and the tool step that answers it.
const adder = defineGraph({
  name: 'adder',
  state: { question: channel.replace(''), turns: channel.append<Message>(), answer: channel.replace('') },
  output: (state) => state.answer,
})
  .node('model', async (state, context) => {
    const model = context.services.languageModel!;
    const response = await context.memo('model', () =>
      model.generate({
        messages: [{ role: 'user', content: state.question }, ...state.turns],
        tools: [{ name: 'add', description: 'Adds two numbers', parameters: { type: 'object' } }],
      }),
    );
    return { turns: response.message, answer: response.message.content ?? '' };
  })
  .node('tool', (state) => {
    const call = state.turns.at(-1)!.tool_calls![0]!;
    const { a, b } = JSON.parse(call.function.arguments) as { a: number; b: number };
    return { turns: { role: 'tool', tool_call_id: call.id, content: String(a + b) } };
  })
  .edge(START, 'model')
  .route('model', (state) => (state.turns.at(-1)?.tool_calls ? 'tool' : END), ['tool', END])
  .edge('tool', 'model')
  .build();

describe('the testing guide: adder', () => {
  it('calls the tool the model asks for, then answers', async () => {
    const languageModel = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, 'The sum is 5.'],
    });

    const result = await runInProcess(adder, { question: 'What is 2 + 3?' }, { services: { languageModel } });

    expect(result.status).toBe('completed');
    expect(result.output).toBe('The sum is 5.');
    expect(result.steps.map((step) => step.node)).toEqual(['model', 'tool', 'model']);
    expect(result.steps[1]!.update).toEqual({ turns: { role: 'tool', tool_call_id: 'call_1_0', content: '5' } });
    expect(languageModel.calls[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: '5' });
  });
});

// This file is the example of docs/guides/testing-your-graphs.md as written there (imports aside): it runs above.
describe('docs/guides/testing-your-graphs.md', () => {
  it('shows the example this file runs', () => {
    const page = readFileSync(new URL('../../docs/guides/testing-your-graphs.md', import.meta.url), 'utf8');
    const block = page.slice(page.indexOf('```ts\n') + 6, page.indexOf('```', page.indexOf('```ts\n') + 6));
    const own = readFileSync(new URL(import.meta.url), 'utf8');
    const example = own
      .slice(own.indexOf('import { describe'), own.indexOf('// This file is the example'))
      .replace("from '../../index.js';", "from 'agentq';")
      .replace("from '../../testing/index.js';", "from 'agentq/testing';")
      .replace("describe('the testing guide: adder'", "describe('adder'");
    expect(example.trim()).toBe(block.trim());
  });
});
