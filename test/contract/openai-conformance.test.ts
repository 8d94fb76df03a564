import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAIEmbedder } from '../../shared/adapters/openai/openai-embedder.js';
import { OpenAILanguageModel } from '../../shared/adapters/openai/openai-language-model.js';
import { OpenAIModerator } from '../../shared/adapters/openai/openai-moderator.js';
import { OpenAIProviderBatches } from '../../shared/adapters/openai/openai-provider-batches.js';
import type { LanguageModelRequest } from '../../shared/ports/language-model.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import {
  loadOpenAIContract,
  OPENAI_OPENAPI_PATH,
  openAIContractPresent,
  type OpenAIContract,
} from '../helpers/openai-contract.js';
import {
  startRecordingHttpProxy,
  type RecordedExchange,
  type RecordingHttpProxy,
} from '../helpers/recording-http-proxy.js';
import { recordFigure } from '../helpers/suite-figures.js';

const system = { role: 'system' as const, content: 'You are terse.' };
const question = { role: 'user' as const, content: 'What is 2 + 2?' };
const search = {
  name: 'search',
  description: 'Search the notes',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};
/** A history with every kind of message the adapters send: a named user, a tool call with no text, its result. */
const history: LanguageModelRequest['messages'] = [
  system,
  { role: 'user', content: 'Find the invoice.', name: 'ada' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'search', arguments: '{"query":"invoice"}' } }],
  },
  { role: 'tool', content: 'invoice 42: 10 EUR', tool_call_id: 'call_1' },
  { role: 'assistant', content: 'Invoice 42 is 10 EUR.' },
  { role: 'user', content: 'And in dollars?' },
];
const image: LanguageModelRequest['messages'] = [
  {
    role: 'user',
    content: [
      { type: 'text', text: 'What is in these pictures?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
    ],
  },
];

// OpenAI's document sits beside the repository in ../shared (see its SOURCE.md), not in it: a checkout
// without it has nothing to validate against.
describe.skipIf(!openAIContractPresent)(
  openAIContractPresent
    ? 'the OpenAI adapters send what the published contract allows'
    : `the OpenAI adapters send what the published contract allows (skipped: no ${OPENAI_OPENAPI_PATH})`,
  () => {
    let contract: OpenAIContract;
    let server: ScriptedOpenAIServer;
    let proxy: RecordingHttpProxy;
    let baseURL: string;
    /** Per case: the exchanges it caused and what the contract says is wrong with the requests and the answers. */
    const checked = new Map<string, { exchanges: RecordedExchange[]; requests: string[]; responses: string[] }>();

    beforeAll(async () => {
      contract = loadOpenAIContract();
      server = await startScriptedOpenAIServer({
        script: (request) =>
          request.body.tools && request.body.messages.at(-1)?.role === 'user'
            ? { toolCalls: [{ name: 'search', arguments: { query: 'invoice' } }] }
            : { content: '{"answer": 4}' },
        // Cached tokens and the flex tier in the answers, so their shape is checked against the contract too.
        promptCache: { minTokens: 0, stepTokens: 1 },
      });
      proxy = await startRecordingHttpProxy(`http://127.0.0.1:${server.port}`);
      baseURL = `${proxy.origin}/v1`;
    }, 60_000);
    afterAll(async () => {
      await proxy?.close();
      await server?.close();
    });

    /** Runs one case through the proxy; every request it sent, and every answer, checked against the contract. */
    async function sent(name: string, run: () => Promise<unknown>): Promise<string[]> {
      const start = proxy.exchanges.length;
      await run();
      const exchanges = proxy.exchanges.slice(start);
      const requests = exchanges.flatMap(({ request }) => contract.checkRequest(request));
      const responses = exchanges.flatMap(({ request, response }) =>
        response ? contract.checkResponse(request, response) : [`${request.method} ${request.url}: no answer`],
      );
      checked.set(name, { exchanges, requests, responses });
      expect(exchanges.length).toBeGreaterThan(0);
      return [...requests, ...responses];
    }
    const model = (options: { stream?: boolean; maxTokensParameter?: 'max_completion_tokens' } = {}) =>
      new OpenAILanguageModel({ model: 'gpt-4o-mini', baseURL, ...options });

    const chatCases: [
      string,
      { stream?: boolean; maxTokensParameter?: 'max_completion_tokens' },
      LanguageModelRequest,
    ][] = [
      ['chat, not streamed', { stream: false }, { messages: [system, question], maxTokens: 50, temperature: 0 }],
      ['chat, streamed (usage asked)', {}, { messages: [system, question], maxTokens: 50, temperature: 0.2 }],
      ['chat with tools, streamed', {}, { messages: [system, question], tools: [search] }],
      ['chat with tools, not streamed', { stream: false }, { messages: [system, question], tools: [search] }],
      [
        'chat with max_completion_tokens',
        { maxTokensParameter: 'max_completion_tokens' },
        { messages: [question], maxTokens: 20 },
      ],
      ['chat naming another model', {}, { messages: [question], model: 'gpt-4.1-mini' }],
      [
        'chat, structured output (json_schema, strict)',
        { stream: false },
        {
          messages: [question],
          responseFormat: {
            type: 'json_schema',
            name: 'answer',
            strict: true,
            schema: {
              type: 'object',
              properties: { answer: { type: 'number' } },
              required: ['answer'],
              additionalProperties: false,
            },
          },
        },
      ],
      [
        'chat, structured output (json_schema, streamed)',
        {},
        { messages: [question], responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' } } },
      ],
      ['chat, JSON mode (json_object)', {}, { messages: [system, question], responseFormat: { type: 'json_object' } }],
      ['chat, text format', { stream: false }, { messages: [question], responseFormat: { type: 'text' } }],
      ['chat with tool calls and results in the history', {}, { messages: history, tools: [search] }],
      ['chat with image content parts', {}, { messages: image }],
      ['chat with image content parts, not streamed', { stream: false }, { messages: image }],
      [
        'chat on the flex tier with a prompt cache key, not streamed',
        { stream: false },
        { messages: [system, question], serviceTier: 'flex', promptCacheKey: 'agentq-3f2a9c' },
      ],
      [
        'chat on the flex tier with a prompt cache key, streamed',
        {},
        { messages: [system, question], tools: [search], serviceTier: 'flex', promptCacheKey: 'agentq-3f2a9c' },
      ],
    ];
    it.each(chatCases)('%s', async (name, options, request) => {
      expect(await sent(name, () => model(options).generate(request))).toEqual([]);
    });

    it('the flex tier and cached tokens an answer reports are read', async () => {
      const cases: [string, boolean][] = [
        ['flex with cached tokens, not streamed', false],
        ['flex with cached tokens, streamed', true],
      ];
      for (const [name, stream] of cases) {
        let response: Awaited<ReturnType<OpenAILanguageModel['generate']>> | undefined;
        const flexRequest: LanguageModelRequest = {
          messages: [system, question],
          serviceTier: 'flex',
          promptCacheKey: `agentq-${name}`,
        };
        expect(await sent(`${name}, warm-up`, () => model({ stream }).generate(flexRequest))).toEqual([]);
        expect(await sent(name, async () => (response = await model({ stream }).generate(flexRequest)))).toEqual([]);
        const text = checked.get(name)!.exchanges[0]!.response!.body.toString('utf8');
        const answered = stream ? undefined : (JSON.parse(text) as unknown);
        if (stream) expect(text).toContain('"service_tier":"flex"');
        // The whole prompt was sent before under the same key: all 7 of its tokens (28 characters) are cached.
        if (answered)
          expect(answered).toMatchObject({
            service_tier: 'flex',
            usage: { prompt_tokens_details: { cached_tokens: 7 } },
          });
        expect(response).toMatchObject({ serviceTier: 'flex', usage: { inputTokens: 7, cachedInputTokens: 7 } });
      }
    });

    it('embeddings: several texts (an empty one among them), with dimensions', async () => {
      const embedder = new OpenAIEmbedder({ model: 'text-embedding-3-small', baseURL, dimensions: 32, batchSize: 2 });
      expect(await sent('embeddings, batched, dimensions', () => embedder.embed(['one', '', 'three']))).toEqual([]);
    });

    it('embeddings: one text, the model length', async () => {
      const embedder = new OpenAIEmbedder({ model: 'text-embedding-3-small', baseURL });
      expect(await sent('embeddings, one text', () => embedder.embed(['just one']))).toEqual([]);
    });

    it('moderations, flagged and not', async () => {
      const moderator = new OpenAIModerator({ model: 'omni-moderation-latest', baseURL });
      expect(await sent('moderation, not flagged', () => moderator.moderate('hello'))).toEqual([]);
      expect(await sent('moderation, flagged', () => moderator.moderate('FLAG_ME please'))).toEqual([]);
    });

    describe('the Batch API adapter', () => {
      let batches: OpenAIProviderBatches;
      let outputFileId: string | undefined;
      beforeAll(() => {
        batches = new OpenAIProviderBatches({
          model: 'gpt-4o-mini',
          baseURL,
          maxTokensParameter: 'max_completion_tokens',
        });
      });
      const line = (customId: string, request: LanguageModelRequest) =>
        JSON.stringify({
          custom_id: customId,
          method: 'POST',
          url: batches.endpoint,
          body: batches.requestBody(request),
        });

      it('asks whether batches are served, uploads, finds the upload, creates, finds, retrieves and cancels', async () => {
        let fileId = '';
        const file = [
          line('a|s0.t0|model|1', { messages: [system, question], maxTokens: 50, temperature: 0 }),
          line('b|s0.t0|model|1', { messages: history, tools: [search] }),
          line('c|s0.t0|model|1', { messages: image, responseFormat: { type: 'json_object' } }),
        ].join('\n');
        const problems = await sent('batches: lifecycle', async () => {
          expect(await batches.supported()).toBe(true);
          fileId = await batches.upload('agentq-conformance.f1.jsonl', file);
          expect(await batches.findUpload('agentq-conformance.f1.jsonl')).toBe(fileId);
          const created = await batches.create(fileId, { agentq_intent: 'conformance' });
          expect((await batches.findBatch('agentq_intent', 'conformance', created.createdAt - 1))?.id).toBe(created.id);
          const done = await batches.retrieve(created.id);
          expect(done.status).toBe('completed');
          outputFileId = done.outputFileId;
          const second = await batches.create(fileId, {});
          await batches.cancel(second.id);
        });
        expect(problems).toEqual([]);
        // Each line of the uploaded file is a request too, sent later by the provider on agentq's behalf.
        const lineProblems = file
          .split('\n')
          .flatMap((text) =>
            contract.checkSchema('CreateChatCompletionRequest', (JSON.parse(text) as { body: unknown }).body),
          );
        expect(lineProblems).toEqual([]);
        const operations = checked
          .get('batches: lifecycle')!
          .exchanges.map(({ request }) => contract.operationId(request.method, request.url));
        expect(new Set(operations)).toEqual(
          new Set(['listBatches', 'createFile', 'listFiles', 'createBatch', 'retrieveBatch', 'cancelBatch']),
        );
      });

      it('downloads the results file asking for a media type the contract serves', async () => {
        expect(outputFileId).toBeDefined();
        const problems = await sent('batches: results download', () => batches.download(outputFileId!));
        expect(problems).toEqual([]);
      });
    });

    it('figures: requests sent, and how many the published contract refuses', () => {
      const cases = [...checked.entries()];
      const exchanges = cases.flatMap(([, entry]) => entry.exchanges);
      const refused = cases.filter(([, entry]) => entry.requests.length > 0);
      const refusedRequests = exchanges.filter(({ request }) => contract.checkRequest(request).length > 0);
      for (const [name, entry] of refused) console.info(`refused: ${name}`, entry.requests);
      const figure = (name: string, value: number | string, goal?: string) =>
        recordFigure({ scenario: 'OpenAI contract', name, value, ...(goal ? { goal } : {}) });
      figure('adapter_request_cases', cases.length);
      figure('adapter_http_requests_validated', exchanges.length);
      figure('adapter_http_requests_refused', refusedRequests.length, '0');
      figure('adapter_cases_refused', refused.map(([name]) => name).join(', ') || 'none');
      figure('responses_on_the_way_refused', cases.filter(([, entry]) => entry.responses.length > 0).length, '0');
      expect(cases.length).toBe(chatCases.length + 10);
    });
  },
);
