import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chatRequestBody } from '../../shared/adapters/openai/chat-completion-codec.js';
import { defineTool } from '../../shared/ports/define-tool.js';

const input = z.object({ city: z.string(), days: z.number().int().min(1).default(1) });
const forecast = (examples: unknown) =>
  defineTool({
    name: 'forecast',
    description: 'Weather forecast for a city',
    input,
    examples: examples as never,
    execute: () => 'sunny',
  });

describe('tool examples', () => {
  it('are checked against the input schema when the tool is defined, and described as JSON', () => {
    const tool = forecast([{ request: 'Weather in Kazan for 3 days?', params: { city: 'Kazan', days: 3 } }]);
    expect(tool.describe()).toEqual({
      name: 'forecast',
      description: 'Weather forecast for a city',
      parameters: tool.parameters,
      examples: [{ request: 'Weather in Kazan for 3 days?', params: { city: 'Kazan', days: 3 } }],
    });
    // A tool without examples describes itself as before: no field at all.
    expect(Object.keys(forecast(undefined).describe())).toEqual(['name', 'description', 'parameters']);
  });

  it('an example whose params the schema refuses fails at definition, naming the example and the field', () => {
    expect(() => forecast([{ request: 'Weather in Kazan?', params: { town: 'Kazan' } }])).toThrow(
      expect.objectContaining({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/tool 'forecast': example 1 \('Weather in Kazan\?'\).*input schema[\s\S]*city/),
      }),
    );
    expect(() =>
      forecast([
        { request: 'ok', params: { city: 'Kazan' } },
        { request: 'zero days', params: { city: 'Kazan', days: 0 } },
      ]),
    ).toThrow(/example 2 \('zero days'\)[\s\S]*days/);
    expect(() => forecast([{ request: ' ', params: { city: 'Kazan' } }])).toThrow(/example 1 needs a request/);
    expect(() => forecast([{ request: 'list', params: ['Kazan'] }])).toThrow(/params must be an object/);
  });

  it('OpenAI-compatible requests leave them out unless asked to write them into the description', () => {
    const tool = forecast([{ request: 'Weather in Kazan for 3 days?', params: { city: 'Kazan', days: 3 } }]);
    const request = { messages: [{ role: 'user' as const, content: 'hi' }], tools: [tool.describe()] };
    const plain = chatRequestBody(request, { model: 'm', maxTokensParameter: 'max_tokens' });
    expect(plain.tools).toEqual([
      {
        type: 'function',
        function: { name: 'forecast', description: 'Weather forecast for a city', parameters: tool.parameters },
      },
    ]);
    const described = chatRequestBody(request, {
      model: 'm',
      maxTokensParameter: 'max_tokens',
      toolExamples: 'description',
    });
    expect(described.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'forecast',
          description:
            'Weather forecast for a city\n\nExamples (request → arguments):\n- "Weather in Kazan for 3 days?" → {"city":"Kazan","days":3}',
          parameters: tool.parameters,
        },
      },
    ]);
  });
});
