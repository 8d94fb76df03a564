import { describe, expect, it } from 'vitest';
import {
  gigachatRequestBody,
  gigachatResponseOf,
  toGigaChatMessages,
} from '../../shared/adapters/gigachat/gigachat-codec.js';
import { collectGigaChatStream } from '../../shared/adapters/gigachat/gigachat-stream.js';
import type { Message } from '../../shared/contracts/run-record.js';

const call = (id: string, name: string, args: string) => ({
  id,
  type: 'function' as const,
  function: { name, arguments: args },
});

describe('GigaChat codec', () => {
  it('sends tool results as function messages, the state id back on its call, parallel calls one by one', () => {
    const history: Message[] = [
      { role: 'system', content: 'sys' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [call('gigachat-state-abc', 'weather', '{"city":"Paris"}')] },
      { role: 'tool', tool_call_id: 'gigachat-state-abc', content: '{"temp":21}' },
      // Written by another provider: two calls at once, a result in plain text, arguments not JSON.
      { role: 'assistant', content: 'Checking.', tool_calls: [call('call_1', 'a', '{}'), call('call_2', 'b', 'oops')] },
      { role: 'tool', tool_call_id: 'call_2', content: 'Error: failed' },
      { role: 'tool', tool_call_id: 'call_1', content: '[1,2]' },
      { role: 'assistant', content: 'Done.' },
    ];
    expect(toGigaChatMessages(history)).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'look\n[image]' },
      {
        role: 'assistant',
        content: '',
        function_call: { name: 'weather', arguments: { city: 'Paris' } },
        functions_state_id: 'abc',
      },
      { role: 'function', name: 'weather', content: '{"temp":21}' },
      { role: 'assistant', content: 'Checking.', function_call: { name: 'a', arguments: {} } },
      { role: 'function', name: 'a', content: '{"result":[1,2]}' },
      { role: 'assistant', content: '', function_call: { name: 'b', arguments: { input: 'oops' } } },
      { role: 'function', name: 'b', content: '{"result":"Error: failed"}' },
      { role: 'assistant', content: 'Done.' },
    ]);
  });

  it('encodes the request: functions only with tools, examples as few_shot_examples, limits by their names', () => {
    expect(
      gigachatRequestBody({ messages: [{ role: 'user', content: 'hi' }] }, { model: 'GigaChat', stream: false }),
    ).toEqual({
      model: 'GigaChat',
      messages: [{ role: 'user', content: 'hi' }],
      stream: false,
    });
    const body = gigachatRequestBody(
      {
        messages: [{ role: 'user', content: 'hi' }],
        model: 'GigaChat-2-Pro',
        temperature: 0.2,
        maxTokens: 50,
        tools: [
          {
            name: 't',
            description: 'd',
            parameters: { type: 'object' },
            examples: [{ request: 'r', params: { x: 1 } }],
          },
        ],
      },
      { model: 'GigaChat', stream: true },
    );
    expect(body).toEqual({
      model: 'GigaChat-2-Pro',
      messages: [{ role: 'user', content: 'hi' }],
      functions: [
        {
          name: 't',
          description: 'd',
          parameters: { type: 'object' },
          few_shot_examples: [{ request: 'r', params: { x: 1 } }],
        },
      ],
      function_call: 'auto',
      temperature: 0.2,
      max_tokens: 50,
      stream: true,
    });
  });

  it('reads replies: a function call with or without a state id (a stable id), blacklist as a refusal, no choice as retryable', () => {
    const reply = (message: object, finish_reason: string) => ({
      choices: [{ message, index: 0, finish_reason }],
      created: 5,
      model: 'G',
    });
    const stated = gigachatResponseOf(
      reply(
        { content: '', function_call: { name: 'f', arguments: { a: 1 } }, functions_state_id: 's1' },
        'function_call',
      ),
      'G',
    );
    expect(stated.message.tool_calls).toEqual([call('gigachat-state-s1', 'f', '{"a":1}')]);
    expect(stated.finishReason).toBe('tool_calls');
    const bare = reply({ content: '', function_call: { name: 'f', arguments: { a: 1 } } }, 'error');
    const once = gigachatResponseOf(bare, 'G').message.tool_calls![0]!.id;
    expect(once).toMatch(/^call_[0-9a-f]{16}$/);
    expect(gigachatResponseOf(bare, 'G').message.tool_calls![0]!.id).toBe(once);
    expect(gigachatResponseOf(reply({ content: 'no' }, 'blacklist'), 'G')).toMatchObject({
      finishReason: 'refusal',
      refusal: 'no',
      message: { content: null },
    });
    expect(gigachatResponseOf(reply({ content: '' }, 'blacklist'), 'G').refusal).toMatch(/declined/);
    expect(gigachatResponseOf(reply({ content: 'cut' }, 'length'), 'G').finishReason).toBe('length');
    expect(() => gigachatResponseOf({ choices: [] }, 'G')).toThrow(
      expect.objectContaining({ code: 'PROVIDER_ERROR', retryable: true }),
    );
  });

  it('folds a stream cut anywhere, CRLF included, with text, a call in pieces, the state id and usage', async () => {
    const events = [
      { choices: [{ delta: { role: 'assistant', content: 'Hel' }, index: 0 }], created: 9, model: 'G' },
      { choices: [{ delta: { content: 'lo' }, index: 0 }] },
      {
        choices: [{ delta: { function_call: { name: 'f', arguments: { a: 1 } }, functions_state_id: 's9' }, index: 0 }],
      },
      {
        choices: [{ delta: { function_call: { arguments: { b: 2 } } }, index: 0, finish_reason: 'function_call' }],
        usage: { prompt_tokens: 3, completion_tokens: 4 },
      },
    ];
    const text = events.map((event) => `data: ${JSON.stringify(event)}\r\n\r\n`).join('') + 'data: [DONE]\r\n\r\n';
    const bytes = new TextEncoder().encode(text);
    async function* cut(): AsyncGenerator<Uint8Array> {
      for (let at = 0; at < bytes.length; at += 7) yield bytes.slice(at, at + 7);
    }
    const pieces: string[] = [];
    const { completion } = await collectGigaChatStream(cut(), (piece) => pieces.push(piece));
    expect(pieces).toEqual(['Hel', 'lo']);
    expect(gigachatResponseOf(completion, 'G')).toMatchObject({
      message: { content: 'Hello', tool_calls: [call('gigachat-state-s9', 'f', '{"a":1,"b":2}')] },
      finishReason: 'tool_calls',
      usage: { inputTokens: 3, outputTokens: 4 },
      model: 'G',
    });
  });
});
