import { Buffer } from 'node:buffer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedBatchApiOptions } from '../fakes/scripted-batch-api.js';
import {
  startScriptedOpenAIServer,
  type ScriptedOpenAIServer,
  type ScriptedResponse,
} from '../fakes/scripted-openai-server.js';
import { RESPONSE_SHAPES } from '../fakes/scripted-response-shapes.js';
import { multipart } from '../helpers/multipart-body.js';
import {
  loadOpenAIContract,
  OPENAI_OPENAPI_PATH,
  openAIContractPresent,
  serverSentData,
  type OpenAIContract,
  type WireRequest,
  type WireResponse,
} from '../helpers/openai-contract.js';
import { recordFigure } from '../helpers/suite-figures.js';

const user = { role: 'user', content: 'What is 2 + 2?' };
const call = { name: 'search', arguments: { query: 'two plus two' } };
const streamed = { stream: true, stream_options: { include_usage: true } };

/**
 * Every shape of chat answer the scripted server can send, with the request's extra fields (streamed or
 * not). A new shape of the scripted server is one more line here.
 */
const chatShapes: [name: string, response: ScriptedResponse, request: Record<string, unknown>][] = [
  ['text answer', { content: 'Four.' }, {}],
  ['text answer, streamed with usage', { content: 'It is four, as asked.' }, streamed],
  ['text answer, streamed without usage', { content: 'Four.' }, { stream: true }],
  ['empty answer', { content: '' }, {}],
  ['empty answer, streamed', { content: '' }, streamed],
  ['tool calls', { toolCalls: [call, { ...call, id: 'call_x' }] }, {}],
  ['tool calls, streamed', { toolCalls: [call, call] }, streamed],
  ['text and a tool call', { content: 'Let me look.', toolCalls: [call] }, {}],
  ['text and a tool call, streamed', { content: 'Let me look.', toolCalls: [call] }, streamed],
  ['malformed tool arguments', { toolCalls: [{ name: 'search', arguments: '{"query": ' }] }, {}],
  ['cut at the length limit', { content: 'It is', finishReason: 'length' }, {}],
  ['cut at the length limit, streamed', { content: 'It is', finishReason: 'length' }, streamed],
  ['content_filter with no text', { content: '', finishReason: 'content_filter' }, {}],
  ['content_filter with no text, streamed', { content: '', finishReason: 'content_filter' }, streamed],
  ['usage as scripted', { content: 'Four.', usage: { prompt_tokens: 9, completion_tokens: 1 } }, {}],
  ['rate limited (429 with Retry-After)', { status: 429, retryAfter: 2 }, {}],
  // The shapes a run must read right (refusal, legacy function_call, custom tool call, JSON to a stream…), both ways.
  ...RESPONSE_SHAPES.flatMap(({ name, response }): [string, ScriptedResponse, Record<string, unknown>][] => [
    [name, response, {}],
    [`${name}, streamed`, response, streamed],
  ]),
];

const jsonl = [
  { custom_id: 'a', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [user] } },
  { custom_id: 'b', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [user] } },
]
  .map((line) => JSON.stringify(line))
  .join('\n');
const never = 3_600_000;

// OpenAI's document sits beside the repository in ../shared (see its SOURCE.md), not in it: a checkout
// without it has nothing to validate against.
describe.skipIf(!openAIContractPresent)(
  openAIContractPresent
    ? 'the scripted OpenAI server answers what the published contract allows'
    : `the scripted OpenAI server answers what the published contract allows (skipped: no ${OPENAI_OPENAPI_PATH})`,
  () => {
    let contract: OpenAIContract;
    let server: ScriptedOpenAIServer;
    const validated: string[] = [];

    beforeAll(async () => {
      contract = loadOpenAIContract();
      server = await startScriptedOpenAIServer();
    }, 60_000);
    afterAll(async () => server?.close());

    /** One HTTP exchange with the scripted server, as sent and as answered. */
    async function exchange(method: string, path: string, body?: unknown): Promise<[WireRequest, WireResponse]> {
      const form =
        body instanceof Map ? multipart(Object.fromEntries(body), [{ name: 'in.jsonl', content: jsonl }]) : undefined;
      const payload = form?.payload ?? (body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(body)));
      const headers: Record<string, string> = {
        accept: 'application/json',
        ...(form?.headers ?? (body === undefined ? {} : { 'content-type': 'application/json' })),
      };
      const answer = await fetch(`http://127.0.0.1:${server.port}${path}`, {
        method,
        headers,
        ...(payload.length > 0 ? { body: new Uint8Array(payload) } : {}),
      });
      return [
        { method, url: path, headers, body: payload },
        {
          status: answer.status,
          headers: Object.fromEntries(answer.headers),
          body: Buffer.from(await answer.arrayBuffer()),
        },
      ];
    }
    /** Sends it, checks request and answer against the contract, and hands back the answer. */
    async function answered(shape: string, method: string, path: string, body?: unknown): Promise<WireResponse> {
      const [request, response] = await exchange(method, path, body);
      expect(contract.checkRequest(request), 'the request itself').toEqual([]);
      expect(contract.checkResponse(request, response)).toEqual([]);
      validated.push(shape);
      return response;
    }
    const conforming = async (shape: string, method: string, path: string, body?: unknown): Promise<string> =>
      (await answered(shape, method, path, body)).body.toString('utf8');

    it.each(chatShapes)('chat: %s', async (name, response, extra) => {
      server.setScript([response]);
      const answer = await answered(`chat: ${name}`, 'POST', '/v1/chat/completions', {
        model: 'gpt-4o-mini',
        messages: [user],
        ...extra,
      });
      // An event stream is checked chunk by chunk: make sure there were chunks to check.
      if (String(answer.headers['content-type']).startsWith('text/event-stream'))
        expect(serverSentData(answer.body.toString('utf8')).length).toBeGreaterThan(2);
    });

    // Floats only: the published contract describes `embedding` as an array of numbers and not the base64
    // string OpenAI sends for `encoding_format: 'base64'`; agentq's embedder asks for floats.
    it.each([
      ['embeddings, floats', { model: 'text-embedding-3-small', input: ['one', 'two'], encoding_format: 'float' }],
      ['embeddings, format unsaid, dimensions', { model: 'text-embedding-3-small', input: 'one', dimensions: 8 }],
    ])('%s', async (name, body) => {
      await conforming(name, 'POST', '/v1/embeddings', body);
    });

    it.each([
      ['moderation, one text', { model: 'omni-moderation-latest', input: 'hello' }],
      ['moderation, several texts, one flagged', { input: ['hello', 'FLAG_ME now'] }],
    ])('%s', async (name, body) => {
      await conforming(name, 'POST', '/v1/moderations', body);
    });

    it('models list', async () => {
      await conforming('models list', 'GET', '/v1/models');
    });

    describe('files and batches', () => {
      let fileId = '';
      const batchShape = async (name: string, options: ScriptedBatchApiOptions, cancel = false) => {
        server.setScript(() => ({ content: 'Four.' }));
        server.batchApi!.configure({ validatingMs: 0, processingMs: 0, outcome: undefined, ...options });
        const create = { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' };
        const batch = JSON.parse(await conforming('batch create', 'POST', '/v1/batches', create)) as {
          id: string;
        };
        if (cancel) {
          const answer = await conforming('batch cancelling', 'POST', `/v1/batches/${batch.id}/cancel`);
          expect((JSON.parse(answer) as { status: string }).status).toBe('cancelling');
        }
        return JSON.parse(await conforming(`batch ${name}`, 'GET', `/v1/batches/${batch.id}`)) as Record<
          string,
          string
        >;
      };

      it('file upload, and the file list empty and not', async () => {
        await conforming('files list, empty', 'GET', '/v1/files?purpose=batch');
        fileId = (
          JSON.parse(await conforming('file upload', 'POST', '/v1/files', new Map([['purpose', 'batch']]))) as {
            id: string;
          }
        ).id;
        await conforming('files list', 'GET', '/v1/files?purpose=batch&limit=100');
      });

      it.each([
        ['validating', { validatingMs: never }],
        ['in progress', { processingMs: never }],
        ['failed', { outcome: () => ({ status: 'failed' as const, message: 'line 1 is not JSON' }) }],
      ])('batch %s', async (name, options) => {
        expect((await batchShape(name, options)).status).toBe(name.replace(' ', '_'));
      });

      it('batch cancelling, then cancelled', async () => {
        expect((await batchShape('cancelled', {}, true)).status).toBe('cancelled');
      });

      it('batch completed and expired, their results and errors files', async () => {
        const completed = await batchShape('completed', {});
        const expired = await batchShape('expired', { outcome: () => ({ status: 'expired', answered: 1 }) });
        expect([completed['status'], expired['status']]).toEqual(['completed', 'expired']);
        const files = [
          ['results', completed['output_file_id']],
          ['results of an expired batch', expired['output_file_id']],
          ['errors', expired['error_file_id']],
        ];
        for (const [kind, id] of files) {
          expect(id).toBeDefined();
          const text = await conforming(`file content (${kind})`, 'GET', `/v1/files/${id}/content`);
          // Each answered line carries a chat completion: the same contract as a live answer.
          for (const line of text.split('\n').filter(Boolean)) {
            const body = (JSON.parse(line) as { response: { body: unknown } | null }).response?.body;
            if (body) expect(contract.checkSchema('CreateChatCompletionResponse', body)).toEqual([]);
          }
        }
        await conforming('batches list', 'GET', '/v1/batches?limit=2');
        await conforming('batches list, past the last', 'GET', `/v1/batches?limit=2&after=${completed['id']}`);
      });
    });

    it('figures: response shapes validated', () => {
      recordFigure({ scenario: 'OpenAI contract', name: 'chat_response_shapes_validated', value: chatShapes.length });
      recordFigure({ scenario: 'OpenAI contract', name: 'response_shapes_validated', value: new Set(validated).size });
      recordFigure({ scenario: 'OpenAI contract', name: 'responses_validated', value: validated.length });
      expect(new Set(validated).size).toBeGreaterThan(chatShapes.length);
    });
  },
);
