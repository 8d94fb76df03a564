import { AgentqError } from '../../contracts/errors.js';
import type { LanguageModel, LanguageModelRequest, LanguageModelResponse } from '../../ports/language-model.js';
import { gigachatRequestBody, gigachatResponseOf, type GigaChatCompletion } from './gigachat-codec.js';
import { gigachatFetchError, gigachatHttpError, type GigaChatErrorContext } from './gigachat-error.js';
import { gigachatHttp, type GigaChatHttp, type GigaChatTlsOptions } from './gigachat-http.js';
import { collectGigaChatStream } from './gigachat-stream.js';
import { GigaChatTokens } from './gigachat-tokens.js';
import { withoutAddress } from '../openai/openai-error.js';

export const GIGACHAT_DEFAULT_BASE_URL = 'https://gigachat.devices.sberbank.ru/api/v1';
export const GIGACHAT_DEFAULT_AUTH_URL = 'https://ngw.devices.sberbank.ru:9443/api/v2/oauth';

export interface GigaChatLanguageModelOptions extends GigaChatTlsOptions {
  /** The model id, e.g. `GigaChat-2-Max`. */
  model: string;
  /** The authorization key the OAuth endpoint exchanges for access tokens (GIGACHAT_AUTH_KEY). */
  authKey: string;
  /** @default 'GIGACHAT_API_PERS' */
  scope?: string;
  /** @default 'https://ngw.devices.sberbank.ru:9443/api/v2/oauth' */
  authUrl?: string;
  /** The API up to `/api/v1`. @default 'https://gigachat.devices.sberbank.ru/api/v1' */
  baseURL?: string;
  /** Per request (the OAuth request and the chat request each), after which it fails with a retryable TIMEOUT. @default 60000 */
  timeoutMs?: number;
  /** Ask for a streamed answer so `onTextDelta` sees text as it comes; the response returned is the same. @default true */
  stream?: boolean;
  /** A token this close to its expiry is renewed first. @default 60000 */
  refreshMarginMs?: number;
  /** A provider's Retry-After is obeyed up to this long. @default 600000 (10 min) */
  maxRetryAfterMs?: number;
  /** Your own fetch (proxy, instrumentation); the TLS options then do not apply. @default fetch, with GIGACHAT_CA_FILE's roots */
  http?: GigaChatHttp;
  /** @default Date.now (tests move the clock) */
  now?: () => number;
}

/**
 * The `LanguageModel` port over GigaChat's chat API: OAuth client credentials (a token renewed before it
 * expires, and once more when the API refuses it), tools as `functions` with their examples as
 * `few_shot_examples`, a `function_call` reply as the one tool call, its `functions_state_id` carried in
 * the call's id back to GigaChat on the next turn, a `blacklist` stop as a refusal. No retries beyond the
 * one after a refused token: failures are `AgentqError`s the step's retry policy counts.
 */
export class GigaChatLanguageModel implements LanguageModel {
  readonly provider = 'gigachat';
  readonly modelId: string;
  private readonly baseURL: string;
  private readonly timeoutMs: number;
  private readonly stream: boolean;
  private readonly maxRetryAfterMs: number;
  private readonly http: GigaChatHttp;
  private readonly tokens: GigaChatTokens;

  constructor(options: GigaChatLanguageModelOptions) {
    if (options.model.trim() === '')
      throw new AgentqError('INVALID_INPUT', 'GigaChatLanguageModel needs a model id (LLM_MODEL)');
    if (options.authKey.trim() === '')
      throw new AgentqError('INVALID_INPUT', 'GigaChatLanguageModel needs an authorization key (GIGACHAT_AUTH_KEY)');
    this.modelId = options.model;
    this.baseURL = (options.baseURL ?? GIGACHAT_DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.stream = options.stream ?? true;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 600_000;
    this.http = options.http ?? gigachatHttp(options);
    this.tokens = new GigaChatTokens({
      authUrl: options.authUrl ?? GIGACHAT_DEFAULT_AUTH_URL,
      authKey: options.authKey,
      scope: options.scope ?? 'GIGACHAT_API_PERS',
      http: this.http,
      timeoutMs: this.timeoutMs,
      ...(options.refreshMarginMs === undefined ? {} : { refreshMarginMs: options.refreshMarginMs }),
      ...(options.now ? { now: options.now } : {}),
    });
  }

  async generate(request: LanguageModelRequest): Promise<LanguageModelResponse> {
    const body = gigachatRequestBody(request, { model: this.modelId, stream: this.stream });
    const context: GigaChatErrorContext = {
      endpoint: 'chat',
      url: this.baseURL,
      model: body.model,
      timeoutMs: this.timeoutMs,
      maxRetryAfterMs: this.maxRetryAfterMs,
    };
    for (let attempt = 1; ; attempt++) {
      const token = await this.tokens.token(request.abortSignal);
      const timeout = AbortSignal.timeout(this.timeoutMs);
      const signal = request.abortSignal ? AbortSignal.any([request.abortSignal, timeout]) : timeout;
      let chunks = 0;
      try {
        const response = await this.http.fetch(`${this.baseURL}/chat/completions`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: this.stream ? 'text/event-stream' : 'application/json',
          },
          body: JSON.stringify(body),
          signal,
        });
        if (response.status === 401 && attempt === 1) {
          // Refused before its expiry (revoked, or the server's clock differs): one fresh token, one more try.
          await response.body?.cancel();
          this.tokens.invalidate(token);
          continue;
        }
        if (!response.ok) throw gigachatHttpError(response.status, await response.text(), response.headers, context);
        let completion: GigaChatCompletion;
        if (isEventStream(response) && response.body) {
          ({ completion, chunks } = await collectGigaChatStream(
            response.body,
            (text) => {
              chunks++;
              request.onTextDelta?.(text);
            },
            request.onToolCallDelta,
          ));
        } else completion = (await response.json()) as GigaChatCompletion;
        return gigachatResponseOf(completion, this.modelId);
      } catch (error) {
        if (error instanceof AgentqError) throw error;
        const mapped = gigachatFetchError(error, {
          stepSignal: request.abortSignal,
          timedOut: timeout.aborted,
          context,
        });
        if (chunks > 0 && mapped instanceof AgentqError && mapped.code === 'PROVIDER_ERROR')
          throw new AgentqError(
            'PROVIDER_ERROR',
            `the GigaChat stream (model '${this.modelId}') broke off after ${chunks} text chunks: ${withoutAddress((error as Error).message ?? String(error), this.baseURL)}`,
            { retryable: true, cause: mapped.cause },
          );
        throw mapped;
      }
    }
  }
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}
