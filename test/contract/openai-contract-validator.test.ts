import { Buffer } from 'node:buffer';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  loadOpenAIContract,
  OPENAI_OPENAPI_PATH,
  openAIContractPresent,
  type OpenAIContract,
  type WireRequest,
  type WireResponse,
} from '../helpers/openai-contract.js';
import { multipart } from '../helpers/multipart-body.js';
import { recordFigure } from '../helpers/suite-figures.js';

const json = (url: string, body: unknown, method = 'POST'): WireRequest => ({
  method,
  url,
  headers: { 'content-type': 'application/json', accept: 'application/json' },
  body: Buffer.from(JSON.stringify(body)),
});
const get = (url: string, accept = 'application/json'): WireRequest => ({
  method: 'GET',
  url,
  headers: { accept },
  body: Buffer.alloc(0),
});
const upload = (fields: Record<string, string>): WireRequest => {
  const { payload, headers } = multipart(fields, [{ name: 'a.jsonl', content: '{}\n' }]);
  return { method: 'POST', url: '/v1/files', headers: { ...headers, accept: 'application/json' }, body: payload };
};
const answer = (body: unknown, contentType = 'application/json'): WireResponse => ({
  status: 200,
  headers: { 'content-type': contentType },
  body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
});

const user = { role: 'user', content: 'hi' };
const chat = (fields: Record<string, unknown>) => json('/v1/chat/completions', { model: 'gpt-4o-mini', ...fields });

/** Requests the published contract must refuse, beside the one-field-different requests it must allow. */
const wrongRequests: [string, WireRequest, WireRequest][] = [
  ['chat: messages is a string', chat({ messages: 'hi' }), chat({ messages: [user] })],
  [
    'chat: a message with an unknown role',
    chat({ messages: [{ role: 'robot', content: 'hi' }] }),
    chat({ messages: [user] }),
  ],
  ['chat: a user message without content', chat({ messages: [{ role: 'user' }] }), chat({ messages: [user] })],
  ['chat: no model', json('/v1/chat/completions', { messages: [user] }), chat({ messages: [user] })],
  ['chat: no messages at all', chat({ messages: [] }), chat({ messages: [user] })],
  [
    'chat: a tool result without tool_call_id',
    chat({ messages: [user, { role: 'tool', content: 'x' }] }),
    chat({ messages: [user, { role: 'tool', content: 'x', tool_call_id: 'call_1' }] }),
  ],
  [
    'chat: an image part without its image_url',
    chat({ messages: [{ role: 'user', content: [{ type: 'image_url' }] }] }),
    chat({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } }] }],
    }),
  ],
  // `stop` is a schema with `nullable` and no `type`: it must still be checked, not skipped.
  ['chat: stop is a number', chat({ messages: [user], stop: 42 }), chat({ messages: [user], stop: null })],
  [
    'chat: response_format of a type that does not exist',
    chat({ messages: [user], response_format: { type: 'yaml' } }),
    chat({ messages: [user], response_format: { type: 'json_object' } }),
  ],
  [
    'embeddings: input is a number',
    json('/v1/embeddings', { model: 'text-embedding-3-small', input: 42 }),
    json('/v1/embeddings', { model: 'text-embedding-3-small', input: '42' }),
  ],
  [
    'embeddings: a field the contract does not have',
    json('/v1/embeddings', { model: 'text-embedding-3-small', inputs: ['x'] }),
    json('/v1/embeddings', { model: 'text-embedding-3-small', input: ['x'] }),
  ],
  ['moderation: input is a number', json('/v1/moderations', { input: 42 }), json('/v1/moderations', { input: 'x' })],
  [
    'moderation: input is an object',
    json('/v1/moderations', { input: { text: 'x' } }),
    json('/v1/moderations', { input: ['x'] }),
  ],
  [
    'batch create: an endpoint batches do not serve',
    json('/v1/batches', { input_file_id: 'file-1', endpoint: '/v1/assistants', completion_window: '24h' }),
    json('/v1/batches', { input_file_id: 'file-1', endpoint: '/v1/chat/completions', completion_window: '24h' }),
  ],
  ['a path the contract does not have', get('/v1/nothing'), get('/v1/batches')],
  ['batches list: a query parameter it does not take', get('/v1/batches?colour=red'), get('/v1/batches?limit=1')],
  ['files list: limit is not an integer', get('/v1/files?limit=many'), get('/v1/files?purpose=batch&limit=100')],
  [
    'file download: Accept application/binary',
    get('/v1/files/file-1/content', 'application/binary'),
    get('/v1/files/file-1/content', 'application/json'),
  ],
  ['file upload: no purpose', upload({}), upload({ purpose: 'batch' })],
  ['file upload: a purpose that does not exist', upload({ purpose: 'poetry' }), upload({ purpose: 'batch' })],
];

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'hi', refusal: null }, logprobs: null, finish_reason: 'stop' },
  ],
};
const chunk = (finishReason: unknown) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }],
});
const stream = (...events: unknown[]) =>
  answer(
    events.map((event) => `data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`).join(''),
    'text/event-stream',
  );
const { created: _created, ...withoutCreated } = completion;
const choice = completion.choices[0]!;
const { logprobs: _logprobs, ...choiceWithoutLogprobs } = choice;
const chatCall = chat({ messages: [user] });

/** Responses the contract must refuse, beside the allowed ones they differ from. */
const wrongResponses: [string, WireRequest, WireResponse, WireResponse][] = [
  ['chat completion without created', chatCall, answer(withoutCreated), answer(completion)],
  [
    'a choice without logprobs',
    chatCall,
    answer({ ...completion, choices: [choiceWithoutLogprobs] }),
    answer(completion),
  ],
  [
    'an assistant message without refusal',
    chatCall,
    answer({ ...completion, choices: [{ ...choice, message: { role: 'assistant', content: 'hi' } }] }),
    answer(completion),
  ],
  [
    'a chunk with a finish reason that does not exist',
    chatCall,
    stream(chunk('done'), '[DONE]'),
    stream(chunk('stop'), '[DONE]'),
  ],
  ['a stream without [DONE]', chatCall, stream(chunk(null)), stream(chunk(null), '[DONE]')],
  [
    'a moderation result without categories',
    json('/v1/moderations', { input: 'x' }),
    answer({ id: 'modr-1', model: 'omni-moderation-latest', results: [{ flagged: false }] }),
    answer({ id: 'modr-1', model: 'omni-moderation-latest', results: [] }),
  ],
  ['a response in a media type not declared', chatCall, answer(completion, 'text/plain'), answer(completion)],
];

// OpenAI's document sits beside the repository in ../shared (see its SOURCE.md), not in it: a checkout
// without it has nothing to validate against.
describe.skipIf(!openAIContractPresent)(
  openAIContractPresent
    ? 'OpenAI contract validator'
    : `OpenAI contract validator (skipped: no ${OPENAI_OPENAPI_PATH})`,
  () => {
    let contract: OpenAIContract;
    beforeAll(() => {
      contract = loadOpenAIContract();
    }, 60_000);

    it.each(wrongRequests)('refuses a wrong request: %s (and allows the right one)', (_name, wrong, right) => {
      expect(contract.checkRequest(wrong)).not.toEqual([]);
      expect(contract.checkRequest(right)).toEqual([]);
    });

    it.each(wrongResponses)(
      'refuses a wrong response: %s (and allows the right one)',
      (_name, request, wrong, right) => {
        expect(contract.checkResponse(request, wrong)).not.toEqual([]);
        expect(contract.checkResponse(request, right)).toEqual([]);
      },
    );

    it('says which field is wrong', () => {
      const problems = contract.checkRequest(chat({ messages: [{ role: 'robot', content: 'hi' }] }));
      expect(problems.join('\n')).toMatch(/messages\/0/);
    });

    it('fails on a keyword it does not know rather than skipping it', () => {
      expect(() => contract.compile({ type: 'string', minLenght: 3 })).toThrow(/unknown keyword/);
    });

    it('reads `nullable` as "null is allowed too", with or without a `type` beside it', () => {
      const typed = contract.compile({ type: 'string', nullable: true });
      expect([typed('a'), typed(null), typed(3)]).toEqual([true, true, false]);
      const untyped = contract.compile({ nullable: true, oneOf: [{ type: 'string' }, { type: 'array' }] });
      expect([untyped('a'), untyped(null), untyped(3)]).toEqual([true, true, false]);
      const notNull = contract.compile({ nullable: false, anyOf: [{ type: 'string' }] });
      expect([notNull('a'), notNull(null)]).toEqual([true, false]);
    });

    it('figures', () => {
      const refused = wrongRequests.filter(([, wrong]) => contract.checkRequest(wrong).length > 0).length;
      const refusedResponses = wrongResponses.filter(
        ([, request, wrong]) => contract.checkResponse(request, wrong).length > 0,
      ).length;
      recordFigure({
        scenario: 'OpenAI contract',
        name: 'wrong_requests_refused',
        value: `${refused}/${wrongRequests.length}`,
        goal: 'all',
      });
      recordFigure({
        scenario: 'OpenAI contract',
        name: 'wrong_responses_refused',
        value: `${refusedResponses}/${wrongResponses.length}`,
        goal: 'all',
      });
      expect(refused).toBe(wrongRequests.length);
    });
  },
);
