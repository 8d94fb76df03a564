/**
 * A scripted OpenAI-compatible HTTP server for tests and benchmarks.
 *
 * The real `openai` SDK talks to it over HTTP (never mock the SDK: what it sends and parses is what the tests prove).
 * Chat answers come from a script, so a test decides exactly what the "model" says and which faults it injects (429
 * with Retry-After, 5xx, context-length 400s, hangs, latency). Embeddings are deterministic hashed bags of
 * words, so retrieval can be tested without a model. Every request is logged for assertions.
 */
import { Buffer } from 'node:buffer';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import { createScriptedBatchApi, type ScriptedBatchApi, type ScriptedBatchApiOptions } from './scripted-batch-api.js';
import {
  answersStreamAsJson,
  chatCompletion,
  chatStreamPieces,
  estimateTokens,
  promptText,
  type ScriptedMessage,
  type ScriptedTiming,
} from './scripted-chat-completion.js';
import { moderation } from './scripted-moderation.js';
import {
  createProviderModes,
  FLEX_UNAVAILABLE_BODY,
  type ScriptedFlexOptions,
  type ScriptedPromptCacheOptions,
} from './scripted-provider-modes.js';

export type { ScriptedMessage, ScriptedTiming, ScriptedToolCall, ScriptedUsage } from './scripted-chat-completion.js';
export { estimateTokens } from './scripted-chat-completion.js';
export type { ScriptedFlexOptions, ScriptedPromptCacheOptions } from './scripted-provider-modes.js';

/**
 * An injected HTTP error with an OpenAI-shaped body `{ error: { message, type, param, code } }`.
 * Defaults depend on the status: 429 → `rate_limit_error` / `rate_limit_exceeded`; 400 with code
 * `context_length_exceeded` → a realistic "maximum context length" message; 5xx → `server_error`.
 */
export interface ScriptedFault extends ScriptedTiming {
  /** HTTP status, e.g. 429, 500, 503, 400. */
  status: number;
  /** `error.code`; default `rate_limit_exceeded` for 429, `null` otherwise. */
  code?: string;
  /** `error.type`; default by status (see above). */
  type?: string;
  /** `error.message`; default a realistic message for the status and code. */
  message?: string;
  /** Seconds sent in the `Retry-After` header (only when set). */
  retryAfter?: number;
  /** Extra response headers, e.g. `{ 'retry-after-ms': '250' }`. */
  headers?: Record<string, string>;
}

/** Never answer: the request stays open until the client aborts or the server closes. */
export interface ScriptedHang extends ScriptedTiming {
  hang: true;
}

/** One scripted answer to one chat request. */
export type ScriptedResponse = ScriptedMessage | ScriptedFault | ScriptedHang;

/** One scripted answer to one embeddings request: a fault, a hang, or `{}` / `{ delayMs }` for a normal answer. */
export type ScriptedEmbeddingsResponse = ScriptedTiming | ScriptedFault | ScriptedHang;

/** How a logged request ended. */
export type RequestOutcome = 'pending' | 'answered' | 'aborted';

/** One request as the server received it, and how it was answered. */
export interface RecordedRequest<Body = unknown> {
  /** Position in `server.requests` (0-based, across all endpoints). */
  index: number;
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Parsed JSON body; `undefined` for an empty or non-JSON body. */
  body: Body;
  /** `Date.now()` when the request arrived. */
  receivedAt: number;
  headers: IncomingHttpHeaders;
  /** Position among the chat (or embeddings) requests that reached the script; absent for other requests. */
  scriptIndex?: number;
  /** HTTP status answered; absent while pending and when the request was never answered (hang, client abort). */
  status?: number;
  /** `Date.now()` when the answer was sent (for a streamed answer: its last chunk). */
  answeredAt?: number;
  /** Streamed answers: `Date.now()` when each content chunk was written, in order. */
  chunkTimes?: number[];
  outcome: RequestOutcome;
}

/** A chat request handed to a script function; its body passed validation (`model` and `messages` present). */
export type ScriptedChatRequest = RecordedRequest<ChatCompletionCreateParams>;

/** A chat script: a queue (each chat request takes the next entry) or a function of the request and its 0-based chat index. */
export type ChatScript =
  | readonly ScriptedResponse[]
  | ((request: ScriptedChatRequest, index: number) => ScriptedResponse | Promise<ScriptedResponse>);

/** An embeddings script: a queue of faults consumed in order (then normal answers), or a function (`undefined` → normal answer). */
export type EmbeddingsScript =
  | readonly ScriptedEmbeddingsResponse[]
  | ((
      request: RecordedRequest,
      index: number,
    ) => ScriptedEmbeddingsResponse | undefined | Promise<ScriptedEmbeddingsResponse | undefined>);

export interface ScriptedOpenAIServerOptions {
  /** Chat answers. Default: empty, so every chat request gets a loud "script exhausted" 500. */
  script?: ChatScript;
  /** Faults for `/v1/embeddings`. Default: none, every embeddings request is answered normally. */
  embeddingsScript?: EmbeddingsScript;
  /** Latency added to every chat and embeddings answer, in ms: a fixed number or a uniformly random `[min, max]`. Default 0. */
  defaultLatencyMs?: number | readonly [number, number];
  /** Embedding vector length when the request does not ask for `dimensions`. Default 64. */
  embeddingDimensions?: number;
  /** Streamed answers: ms between chunks (50 tokens/s is 20). Default 0. */
  streamChunkDelayMs?: number;
  /** Model ids listed by `GET /v1/models`. Default `['scripted-chat', 'scripted-embedding']`. Requests may name any model. */
  models?: readonly string[];
  /** `/v1/moderations` flags (category `harassment`) an input containing one of these, case-insensitive. Default `['FLAG_ME']`. */
  flaggedTerms?: readonly string[];
  /** The Batch API (`/v1/files`, `/v1/batches`; scripted-batch-api.ts), its lines answered by the chat script; `false`: none (404). Default `{}`. */
  batchApi?: ScriptedBatchApiOptions | false;
  /** The flex tier: `service_tier: "flex"` requests answered later, or refused with OpenAI's 429 for flex capacity. Default: answered like any other (the tier echoed). */
  flex?: ScriptedFlexOptions;
  /** The prompt cache: `usage.prompt_tokens_details.cached_tokens` for a prefix sent recently. Default: off (no details). */
  promptCache?: ScriptedPromptCacheOptions;
}

export interface ScriptedOpenAIServer {
  /** Base URL to give the SDK as `baseURL`, e.g. `http://127.0.0.1:41234/v1`. */
  readonly url: string;
  readonly port: number;
  /** Every request received, in arrival order (a live array). */
  readonly requests: readonly RecordedRequest[];
  /** The chat requests that reached the script (invalid ones are only in `requests`). */
  chatRequests(): ScriptedChatRequest[];
  /** The embeddings requests that passed validation. */
  embeddingRequests(): RecordedRequest[];
  /** Append responses to the chat queue; throws when the current script is a function. */
  push(...responses: ScriptedResponse[]): void;
  /** Replace the chat script (a queue given here is answered from its start; the chat index keeps counting). */
  setScript(script: ChatScript): void;
  /** Forget the request log and counters and go back to the chat script given in the options. */
  reset(): void;
  /** Stop listening and drop every open connection, hanging requests included. Idempotent. */
  close(): Promise<void>;
  /** The Batch API's files and batches (undefined when started with `batchApi: false`). */
  readonly batchApi: ScriptedBatchApi | undefined;
}

const chatPath = '/v1/chat/completions';
const embeddingsPath = '/v1/embeddings';
const modelsPath = '/v1/models';
const moderationsPath = '/v1/moderations';

/**
 * The deterministic embedding of `text`: a signed hashed bag of lowercase words, L2-normalised. Texts
 * sharing words point the same way; unrelated texts are near-orthogonal. Values are float32-exact, so
 * the base64 and float answers decode to the same numbers.
 */
export function embedText(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const hash = fnv1a(word);
    const slot = hash % dimensions;
    // A sign bit from the hash keeps collisions of unrelated words from adding up to fake similarity.
    vector[slot] = (vector[slot] ?? 0) + (hash >>> 31 === 1 ? -1 : 1);
  }
  const norm = Math.hypot(...vector);
  // Text without words gets a fixed unit vector rather than zeros, which would make cosine similarity NaN.
  if (norm === 0) return vector.map((_, position) => (position === 0 ? 1 : 0));
  return vector.map((value) => Math.fround(value / norm));
}

/** Start the server on a random free loopback port. */
export async function startScriptedOpenAIServer(
  options: ScriptedOpenAIServerOptions = {},
): Promise<ScriptedOpenAIServer> {
  const models = options.models ?? ['scripted-chat', 'scripted-embedding'];
  const embeddingDimensions = options.embeddingDimensions ?? 64;
  const initialScript: ChatScript = options.script ?? [];
  // Aborted by close(): ends delays and hangs so no timer or request keeps the process alive.
  const closing = new AbortController();

  const requests: RecordedRequest[] = [];
  let script: ChatScript = copyScript(initialScript);
  // Next unanswered queue entry. It only moves when an entry is used, so after an exhausted request a
  // push()ed response answers the next request.
  let queueCursor = 0;
  let chatCount = 0;
  let embeddingsCount = 0;
  const modes = createProviderModes(options.flex, options.promptCache);
  // Batch lines are answered by the chat script (taking chat indexes), but are not live chat requests.
  const batchApi =
    options.batchApi === false
      ? undefined
      : createScriptedBatchApi(options.batchApi ?? {}, async (body) => {
          const chatIndex = chatCount++;
          const record = {
            index: -1,
            method: 'POST',
            path: chatPath,
            body,
            receivedAt: Date.now(),
            headers: {},
            outcome: 'pending' as const,
            scriptIndex: chatIndex,
          };
          const scripted = await nextChatResponse(record as unknown as ScriptedChatRequest, chatIndex);
          if (scripted === undefined || isHang(scripted))
            return {
              status: 500,
              body: errorBody(
                `scripted OpenAI server: no answer for batch line (chat index ${chatIndex})`,
                'server_error',
                'script_exhausted',
              ),
            };
          if (isFault(scripted)) {
            let faulted: { status: number; body: unknown } = { status: scripted.status, body: null };
            answerFault(
              scripted,
              body as unknown as ChatCompletionCreateParams,
              (status, errorBodyValue) => (faulted = { status, body: errorBodyValue }),
            );
            return faulted;
          }
          return {
            status: 200,
            body: chatCompletion(scripted, body as unknown as ChatCompletionCreateParams, chatIndex),
          };
        });

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      // A bug here must fail the test loudly rather than leave the client waiting.
      if (!response.headersSent && !response.destroyed) {
        sendJson(response, 500, errorBody(`scripted server failed: ${errorMessage(error)}`, 'server_error', null));
      } else {
        response.destroy();
      }
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const handleChat = (record: RecordedRequest, rawBody: string, signal: AbortSignal, answer: Answer) =>
      chatWith(record, rawBody, signal, answer, response);
    const receivedAt = Date.now();
    const rawBody = await readBody(request);
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    const record: RecordedRequest = {
      index: requests.length,
      method: request.method ?? 'GET',
      path,
      body: parseJson(rawBody),
      receivedAt,
      headers: request.headers,
      outcome: 'pending',
    };
    requests.push(record);

    const clientGone = new AbortController();
    response.on('close', () => {
      if (!response.writableFinished) {
        clientGone.abort();
        if (record.outcome === 'pending') record.outcome = 'aborted';
      }
    });
    const signal = AbortSignal.any([clientGone.signal, closing.signal]);
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      if (signal.aborted || response.destroyed) return;
      record.status = status;
      record.answeredAt = Date.now();
      record.outcome = 'answered';
      sendJson(response, status, body, { 'x-request-id': `req_scripted_${record.index}`, ...headers });
    };

    if (record.method === 'POST' && path === chatPath) {
      await handleChat(record, rawBody, signal, answer);
    } else if (record.method === 'POST' && path === embeddingsPath) {
      await handleEmbeddings(record, rawBody, signal, answer);
    } else if (record.method === 'POST' && path === moderationsPath) {
      answer(200, moderation(record.body, options.flaggedTerms ?? ['FLAG_ME']));
    } else if (record.method === 'GET' && path === modelsPath) {
      answer(200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'scripted' })),
      });
    } else if (
      batchApi &&
      (await batchApi.handle(record.method, request.url ?? path, rawBody, request.headers, response))
    ) {
      record.outcome = 'answered';
    } else {
      answer(404, errorBody(`Unknown request URL: ${record.method} ${path}.`, 'invalid_request_error', 'unknown_url'));
    }
  }

  /**
   * A streamed answer as OpenAI sends it: `chat.completion.chunk` objects over SSE (the deltas of
   * `chatStreamPieces`), the usage chunk when `stream_options.include_usage` asks for it, then `[DONE]`.
   */
  async function streamChat(
    record: RecordedRequest,
    response: ServerResponse,
    scripted: ScriptedMessage,
    body: ChatCompletionCreateParams,
    chatIndex: number,
    signal: AbortSignal,
  ): Promise<void> {
    const completion = modes.mark(chatCompletion(scripted, body, chatIndex), body) as {
      id: string;
      created: number;
      model: string;
      usage: unknown;
      service_tier?: string;
    };
    const delayMs = scripted.chunkDelayMs ?? options.streamChunkDelayMs ?? 0;
    record.status = 200;
    record.chunkTimes = [];
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-request-id': `req_scripted_${record.index}`,
    });
    const base = {
      id: completion.id,
      object: 'chat.completion.chunk',
      created: completion.created,
      model: completion.model,
      ...(completion.service_tier ? { service_tier: completion.service_tier } : {}),
    };
    const send = (delta: Record<string, unknown>, finishReason: string | null = null, usage?: unknown) => {
      response.write(
        `data: ${JSON.stringify({ ...base, choices: usage ? [] : [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...(usage ? { usage } : {}) })}\n\n`,
      );
    };
    let contentChunks = 0;
    for (const piece of chatStreamPieces(completion)) {
      if (piece.content && scripted.failAfterChunks !== undefined && contentChunks >= scripted.failAfterChunks) {
        record.outcome = 'aborted';
        // Destroyed once what was written has reached the socket, so the client sees the chunks, then the cut.
        await new Promise<void>((resolve) => response.write('', () => resolve()));
        response.destroy();
        return;
      }
      if (piece.paced && delayMs > 0 && !(await waitLatency(delayMs, signal))) return;
      if (signal.aborted || response.destroyed) return;
      send(piece.delta, piece.finishReason ?? null);
      if (piece.content) {
        contentChunks++;
        record.chunkTimes.push(Date.now());
      }
    }
    const streamOptions = (body as { stream_options?: { include_usage?: boolean } }).stream_options;
    if (streamOptions?.include_usage) send({}, null, completion.usage);
    response.end('data: [DONE]\n\n');
    record.answeredAt = Date.now();
    record.outcome = 'answered';
  }

  async function chatWith(
    record: RecordedRequest,
    rawBody: string,
    signal: AbortSignal,
    answer: Answer,
    response: ServerResponse,
  ): Promise<void> {
    const invalid = validateChatBody(record.body, rawBody);
    if (invalid) return answer(400, invalid);
    const body = record.body as ChatCompletionCreateParams;
    const chatIndex = chatCount++;
    record.scriptIndex = chatIndex;
    // A flex refusal takes no script answer: the retry gets the one this request would have had.
    const flex = modes.beforeAnswer(body);
    if (flex.refuse) return answer(429, FLEX_UNAVAILABLE_BODY);
    const scripted = await nextChatResponse(record as ScriptedChatRequest, chatIndex);
    if (scripted === undefined) {
      const message =
        `scripted OpenAI server: script exhausted at request ${chatIndex + 1} ` +
        `(chat request index ${chatIndex}); push() more responses or script a function`;
      return answer(500, errorBody(message, 'server_error', 'script_exhausted'));
    }
    if (!(await waitLatency(scripted.delayMs, signal))) return;
    if (isHang(scripted)) return waitForAbort(signal);
    if (isFault(scripted)) return answerFault(scripted, body, answer);
    if (flex.extraDelayMs > 0 && !(await waitLatency(flex.extraDelayMs, signal))) return;
    if (body.stream === true && !answersStreamAsJson(scripted))
      return streamChat(record, response, scripted, body, chatIndex, signal);
    answer(200, modes.mark(chatCompletion(scripted, body, chatIndex), body));
  }

  async function nextChatResponse(
    request: ScriptedChatRequest,
    chatIndex: number,
  ): Promise<ScriptedResponse | undefined> {
    const current = script;
    if (typeof current === 'function') {
      try {
        return await current(request, chatIndex);
      } catch (error) {
        return {
          status: 500,
          type: 'server_error',
          code: 'script_error',
          message: `scripted OpenAI server: script function threw: ${errorMessage(error)}`,
        };
      }
    }
    const next = current[queueCursor];
    if (next !== undefined) queueCursor++;
    return next;
  }

  async function handleEmbeddings(
    record: RecordedRequest,
    rawBody: string,
    signal: AbortSignal,
    answer: Answer,
  ): Promise<void> {
    const parsed = validateEmbeddingsBody(record.body, rawBody);
    if ('error' in parsed) return answer(400, parsed);

    const embeddingsIndex = embeddingsCount++;
    record.scriptIndex = embeddingsIndex;
    const scripted = (await nextEmbeddingsResponse(record, embeddingsIndex)) ?? {};
    if (!(await waitLatency(scripted.delayMs, signal))) return;
    if (isHang(scripted)) return waitForAbort(signal);
    if (isFault(scripted)) return answerFault(scripted, undefined, answer);

    const dimensions = parsed.dimensions ?? embeddingDimensions;
    const base64 = parsed.encodingFormat === 'base64';
    const data = parsed.inputs.map((text, index) => {
      const vector = embedText(text, dimensions);
      return { object: 'embedding', index, embedding: base64 ? float32Base64(vector) : vector };
    });
    const promptTokens = parsed.inputs.reduce((sum, text) => sum + estimateTokens(text), 0);
    answer(200, {
      object: 'list',
      data,
      model: parsed.model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    });
  }

  async function nextEmbeddingsResponse(
    request: RecordedRequest,
    index: number,
  ): Promise<ScriptedEmbeddingsResponse | undefined> {
    const embeddingsScript = options.embeddingsScript;
    if (embeddingsScript === undefined) return undefined;
    if (typeof embeddingsScript !== 'function') return embeddingsScript[index];
    try {
      return await embeddingsScript(request, index);
    } catch (error) {
      return {
        status: 500,
        type: 'server_error',
        code: 'script_error',
        message: `scripted OpenAI server: embeddings script threw: ${errorMessage(error)}`,
      };
    }
  }

  function waitLatency(delayMs: number | undefined, signal: AbortSignal): Promise<boolean> {
    const latency = delayMs ?? pickLatency(options.defaultLatencyMs);
    if (latency <= 0) return Promise.resolve(!signal.aborted);
    return sleep(latency, true, { signal }).catch(() => false);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    batchApi,
    chatRequests: () =>
      requests.filter(
        (record) => record.path === chatPath && record.scriptIndex !== undefined,
      ) as ScriptedChatRequest[],
    embeddingRequests: () =>
      requests.filter((record) => record.path === embeddingsPath && record.scriptIndex !== undefined),
    push(...responses) {
      if (typeof script === 'function')
        throw new Error('push() needs a queue script; this server is scripted by a function');
      script = [...script, ...responses];
    },
    setScript(next) {
      script = copyScript(next);
      queueCursor = 0;
    },
    reset() {
      requests.length = 0;
      chatCount = 0;
      embeddingsCount = 0;
      queueCursor = 0;
      script = copyScript(initialScript);
      modes.reset();
    },
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        closing.abort();
        server.close((error) => (error ? reject(error) : resolve()));
        // close() alone waits for open connections: hanging requests and idle keep-alive sockets would block it.
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

type Answer = (status: number, body: unknown, headers?: Record<string, string>) => void;

interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

function errorBody(message: string, type: string, code: string | null, param: string | null = null): OpenAIErrorBody {
  return { error: { message, type, param, code } };
}

function answerFault(fault: ScriptedFault, chatBody: ChatCompletionCreateParams | undefined, answer: Answer): void {
  const headers: Record<string, string> = { ...fault.headers };
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  const code = fault.code ?? (fault.status === 429 ? 'rate_limit_exceeded' : null);
  const type =
    fault.type ??
    (fault.status === 429 ? 'rate_limit_error' : fault.status >= 500 ? 'server_error' : 'invalid_request_error');
  const param = code === 'context_length_exceeded' ? 'messages' : null;
  answer(
    fault.status,
    errorBody(fault.message ?? defaultFaultMessage(fault.status, code, chatBody), type, code, param),
    headers,
  );
}

function defaultFaultMessage(
  status: number,
  code: string | null,
  chatBody: ChatCompletionCreateParams | undefined,
): string {
  if (code === 'context_length_exceeded') {
    const limit = 8192;
    const used = Math.max(limit + 1, chatBody ? estimateTokens(promptText(chatBody)) : 0);
    return (
      `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${used} tokens. ` +
      'Please reduce the length of the messages.'
    );
  }
  if (status === 429) return 'Rate limit reached for requests. Please try again later.';
  if (status >= 500) return 'The server had an error while processing your request. Sorry about that!';
  return `Scripted error (HTTP ${status}).`;
}

function validateChatBody(body: unknown, rawBody: string): OpenAIErrorBody | undefined {
  if (!isObject(body)) return invalidJson(rawBody);
  if (typeof body['model'] !== 'string' || body['model'] === '') {
    return errorBody('you must provide a model parameter', 'invalid_request_error', null, 'model');
  }
  if (!Array.isArray(body['messages'])) {
    return errorBody(
      "Missing required parameter: 'messages'.",
      'invalid_request_error',
      'missing_required_parameter',
      'messages',
    );
  }
  return undefined;
}

interface EmbeddingsParams {
  model: string;
  inputs: string[];
  dimensions?: number;
  encodingFormat: 'float' | 'base64';
}

function validateEmbeddingsBody(body: unknown, rawBody: string): EmbeddingsParams | OpenAIErrorBody {
  if (!isObject(body)) return invalidJson(rawBody);
  const { model, input, dimensions, encoding_format: encodingFormat } = body;
  if (typeof model !== 'string' || model === '')
    return errorBody('you must provide a model parameter', 'invalid_request_error', null, 'model');
  const inputs = typeof input === 'string' ? [input] : input;
  if (
    !Array.isArray(inputs) ||
    inputs.length === 0 ||
    !inputs.every((item): item is string => typeof item === 'string')
  ) {
    return errorBody(
      "'input' must be a string or a non-empty array of strings (token arrays are not supported here).",
      'invalid_request_error',
      null,
      'input',
    );
  }
  if (dimensions !== undefined && (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1)) {
    return errorBody("'dimensions' must be a positive integer.", 'invalid_request_error', null, 'dimensions');
  }
  if (encodingFormat !== undefined && encodingFormat !== 'float' && encodingFormat !== 'base64') {
    return errorBody(
      "'encoding_format' must be 'float' or 'base64'.",
      'invalid_request_error',
      null,
      'encoding_format',
    );
  }
  // OpenAI answers floats when encoding_format is absent; the SDK asks base64 unless told otherwise.
  return { model, inputs, dimensions, encodingFormat: encodingFormat ?? 'float' };
}

function invalidJson(rawBody: string): OpenAIErrorBody {
  const message =
    rawBody.trim() === ''
      ? 'We could not parse the JSON body of your request: the body is empty.'
      : "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload.)";
  return errorBody(message, 'invalid_request_error', null);
}

/** Little-endian float32 bytes in base64: what the SDK decodes when it asks `encoding_format: 'base64'`. */
function float32Base64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, position) => bytes.writeFloatLE(value, position * 4));
  return bytes.toString('base64');
}

/** FNV-1a, 32-bit: a tiny stable string hash (no crypto needed, and the same on every machine). */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let position = 0; position < text.length; position++) {
    hash ^= text.charCodeAt(position);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function pickLatency(latency: number | readonly [number, number] | undefined): number {
  if (latency === undefined) return 0;
  if (typeof latency === 'number') return latency;
  const [min, max] = latency;
  return min + Math.random() * (max - min);
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

function isHang(response: ScriptedResponse | ScriptedEmbeddingsResponse): response is ScriptedHang {
  return 'hang' in response && response.hang === true;
}

function isFault(response: ScriptedResponse | ScriptedEmbeddingsResponse): response is ScriptedFault {
  return 'status' in response && typeof response.status === 'number';
}

function copyScript(script: ChatScript): ChatScript {
  return typeof script === 'function' ? script : [...script];
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
