import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { LanguageModelResponse } from '../../shared/ports/language-model.js';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { OpenAILanguageModel } from '../../shared/adapters/openai/openai-language-model.js';
import { chatResponseOf } from '../../shared/adapters/openai/chat-completion-codec.js';
import { collectChatStream } from '../../shared/adapters/openai/collect-chat-stream.js';
import { usableResponse, type AcceptableOutcome } from '../../worker/agents/llm/usable-response.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import {
  RESPONSE_SHAPES,
  SHAPE_TOOL,
  responseShape,
  type ResponseShapeName,
} from '../fakes/scripted-response-shapes.js';

/** What the port returns for each shape, and what a run makes of it (the error code, or none). */
const EXPECTED: Record<
  ResponseShapeName,
  {
    response: (streamed: boolean) => Partial<LanguageModelResponse>;
    code?: string;
    retryable?: boolean;
    accept?: AcceptableOutcome;
  }
> = {
  'json-to-stream': {
    response: () => ({
      message: { role: 'assistant', content: 'The answer, as one JSON body.' },
      finishReason: 'stop',
    }),
  },
  refusal: {
    response: () => ({ refusal: "I'm sorry, but I can't help with that request.", finishReason: 'refusal' }),
    code: 'MODEL_REFUSED',
    retryable: false,
    accept: 'refusal',
  },
  'content-filter-empty': {
    response: () => ({ message: { role: 'assistant', content: null }, finishReason: 'content_filter' }),
    code: 'CONTENT_FILTERED',
    retryable: false,
    accept: 'content_filter',
  },
  'length-empty': {
    // A stream without text deltas has no content at all; the JSON body said ''.
    response: (streamed) => ({ message: { role: 'assistant', content: streamed ? null : '' }, finishReason: 'length' }),
    code: 'OUTPUT_TRUNCATED',
    retryable: false,
    accept: 'length',
  },
  empty: {
    response: (streamed) => ({ message: { role: 'assistant', content: streamed ? null : '' }, finishReason: 'stop' }),
    code: 'EMPTY_RESPONSE',
    retryable: true,
    accept: 'empty',
  },
  'custom-tool-call': {
    response: () => ({
      message: { role: 'assistant', content: null },
      unsupportedToolCalls: [{ type: 'custom', name: SHAPE_TOOL }],
    }),
    code: 'UNSUPPORTED_TOOL_CALL',
    retryable: false,
  },
  'legacy-function-call': {
    response: () => ({
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_chatcmpl-scripted-0_function',
            type: 'function',
            function: { name: SHAPE_TOOL, arguments: '{"expression":"2+3"}' },
          },
        ],
      },
      finishReason: 'tool_calls',
    }),
  },
};

/** Each shape through the real SDK over HTTP, streamed and not: what the port returns, then what a run makes of it. */
describe.each([true, false])('response shapes (stream: %s)', (stream) => {
  let server: ScriptedOpenAIServer;
  let model: OpenAILanguageModel;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    model = new OpenAILanguageModel({ model: 'scripted-chat', baseURL: server.url, timeoutMs: 10_000, stream });
  });
  afterAll(async () => server.close());
  beforeEach(() => server.reset());

  it.each(RESPONSE_SHAPES.map((shape) => shape.name))('%s', async (name) => {
    const expected = EXPECTED[name];
    server.setScript([responseShape(name)]);
    const response = await model.generate({ messages: [{ role: 'user', content: 'hi' }] });
    expect((server.chatRequests()[0]?.body as { stream?: boolean }).stream === true).toBe(stream);
    expect(response).toMatchObject(expected.response(stream));
    if (name !== 'legacy-function-call' && name !== 'json-to-stream')
      expect(response.message.tool_calls).toBeUndefined();
    if (!expected.code) {
      expect(usableResponse(response)).toBe(response);
      return;
    }
    const error = (() => {
      try {
        usableResponse(response);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(AgentqError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: expected.code, retryable: expected.retryable });
    if (name === 'refusal')
      expect((error as Error).message).toContain("I'm sorry, but I can't help with that request.");
    if (name === 'custom-tool-call') expect((error as Error).message).toMatch(/'custom' call of tool 'calculator'/);
    if (expected.accept) {
      const accepted = usableResponse(response, [expected.accept]);
      // An accepted refusal is the answer; the other accepted cases answer nothing.
      expect(accepted.message.content ?? '').toBe(name === 'refusal' ? response.refusal : '');
    }
  });
});

describe('a streamed refusal and function_call in fragments', () => {
  it('are joined from their deltas', async () => {
    const server = await startScriptedOpenAIServer({
      script: [
        { refusal: 'no can do, sorry' },
        { functionCall: { name: 'look_up', arguments: { city: 'Paris', days: 3 } } },
      ],
    });
    try {
      const model = new OpenAILanguageModel({ model: 'scripted-chat', baseURL: server.url });
      expect((await model.generate({ messages: [{ role: 'user', content: 'a' }] })).refusal).toBe('no can do, sorry');
      const call = (await model.generate({ messages: [{ role: 'user', content: 'b' }] })).message.tool_calls?.[0];
      expect(call?.function).toEqual({ name: 'look_up', arguments: '{"city":"Paris","days":3}' });
    } finally {
      await server.close();
    }
  });
});

describe('collectChatStream and chatResponseOf on tool calls of another type', () => {
  it('keep a streamed custom call as unsupported, naming its tool, instead of dropping it', async () => {
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk' as const, created: 0, model: 'm' };
    async function* chunks(): AsyncGenerator<ChatCompletionChunk> {
      yield {
        ...base,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: 'c1', type: 'custom', function: { name: 'grep' } }] },
            finish_reason: null,
          },
        ],
      } as unknown as ChatCompletionChunk;
      yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] };
    }
    const { completion } = await collectChatStream(chunks());
    const response = chatResponseOf(completion, { baseURL: 'http://x', modelId: 'm' });
    expect(response.unsupportedToolCalls).toEqual([{ type: 'custom', name: 'grep' }]);
    expect(response.message.tool_calls).toBeUndefined();
    expect(() => usableResponse(response, ['empty', 'length', 'content_filter', 'refusal'])).toThrow(
      expect.objectContaining({ code: 'UNSUPPORTED_TOOL_CALL' }),
    );
  });
});
