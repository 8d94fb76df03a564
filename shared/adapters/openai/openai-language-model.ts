import type OpenAI from 'openai';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { AgentqError } from '../../contracts/errors.js';
import type { LanguageModel, LanguageModelRequest, LanguageModelResponse } from '../../ports/language-model.js';
import { chatRequestBody, chatResponseOf } from './chat-completion-codec.js';
import { createOpenAIClient } from './create-openai-client.js';
import { collectChatStream } from './collect-chat-stream.js';
import { addressedCause, mapOpenAIError, withoutAddress } from './openai-error.js';
import { offersFlex } from '../../llm/offers-flex.js';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAILanguageModelOptions {
  /** The model id, e.g. `gpt-4o-mini`, `llama3.2`. */
  model: string;
  /** Any OpenAI-compatible endpoint: OpenAI, Ollama (`http://localhost:11434/v1`), vLLM, llama.cpp server. @default 'https://api.openai.com/v1' */
  baseURL?: string;
  /** Sent as a bearer token; local servers usually need none. @default none */
  apiKey?: string;
  /** Per request, after which it fails with a retryable TIMEOUT. @default 60000 */
  timeoutMs?: number;
  /** Per flex-tier request (`serviceTier: 'flex'`), which the provider may queue: OpenAI advises 15 minutes. @default 900000 */
  flexTimeoutMs?: number;
  /**
   * Whether the provider offers the flex tier (`tiers` of the port): `auto` says yes for OpenAI's own
   * endpoint only, since compatible servers reject or ignore `service_tier`. @default 'auto'
   */
  flex?: 'auto' | 'on' | 'off';
  /** `gen_ai.provider.name` on spans. @default 'openai' (the OpenTelemetry name for OpenAI-compatible APIs) */
  provider?: string;
  /**
   * How `maxTokens` is sent: `max_tokens` is understood by every OpenAI-compatible server; OpenAI's
   * reasoning models (o-series) want `max_completion_tokens`. @default 'max_tokens'
   */
  maxTokensParameter?: 'max_tokens' | 'max_completion_tokens';
  /**
   * Ask for a streamed answer (`stream: true`, usage in the last chunk via `stream_options.include_usage`)
   * so `onTextDelta` sees text as it comes; the response returned is the same. @default true
   */
  stream?: boolean;
  /** A provider's Retry-After is obeyed up to this long. @default 600000 (10 min) */
  maxRetryAfterMs?: number;
  /**
   * Tools' examples (`defineTool({ examples })`): chat completions have no field for them, so `description`
   * writes them into each tool's description and `omit` sends none. @default 'omit'
   */
  toolExamples?: 'omit' | 'description';
  /** Your own SDK client (custom fetch, proxy, headers); its retries are ignored (every request sets `maxRetries: 0`). */
  client?: OpenAI;
}

/**
 * The `LanguageModel` port over the openai SDK's chat completions, with tools. The SDK's own retries
 * are off: every failure is mapped to an `AgentqError` (docs/reference/errors.md) and the step's retry policy
 * counts the attempts.
 */
export class OpenAILanguageModel implements LanguageModel {
  readonly provider: string;
  readonly modelId: string;
  readonly tiers: readonly 'flex'[];
  private readonly client: OpenAI;
  private readonly baseURL: string;
  private readonly timeoutMs: number;
  private readonly flexTimeoutMs: number;
  private readonly maxTokensParameter: 'max_tokens' | 'max_completion_tokens';
  private readonly maxRetryAfterMs: number;
  private readonly stream: boolean;
  private readonly toolExamples: 'omit' | 'description';

  constructor({
    model,
    baseURL = OPENAI_DEFAULT_BASE_URL,
    apiKey,
    timeoutMs = 60_000,
    flexTimeoutMs = 900_000,
    flex = 'auto',
    provider = 'openai',
    maxTokensParameter = 'max_tokens',
    maxRetryAfterMs = 600_000,
    stream = true,
    toolExamples = 'omit',
    client,
  }: OpenAILanguageModelOptions) {
    if (model.trim() === '') throw new AgentqError('INVALID_INPUT', 'OpenAILanguageModel needs a model id (LLM_MODEL)');
    this.modelId = model;
    this.provider = provider;
    this.baseURL = client?.baseURL ?? baseURL;
    this.timeoutMs = timeoutMs;
    this.flexTimeoutMs = flexTimeoutMs;
    this.tiers = offersFlex(flex, this.baseURL) ? ['flex'] : [];
    this.maxTokensParameter = maxTokensParameter;
    this.maxRetryAfterMs = maxRetryAfterMs;
    this.stream = stream;
    this.toolExamples = toolExamples;
    this.client = client ?? createOpenAIClient({ baseURL, apiKey, timeoutMs });
  }

  async generate(request: LanguageModelRequest): Promise<LanguageModelResponse> {
    const body = chatRequestBody(request, {
      model: this.modelId,
      maxTokensParameter: this.maxTokensParameter,
      toolExamples: this.toolExamples,
    });
    const flex = request.serviceTier === 'flex';
    const timeoutMs = flex ? this.flexTimeoutMs : this.timeoutMs;
    const requestOptions = { signal: request.abortSignal ?? null, timeout: timeoutMs, maxRetries: 0 };
    let completion: ChatCompletion;
    let chunks = 0;
    try {
      if (this.stream) {
        const { data: stream, response } = await this.client.chat.completions
          .create({ ...body, stream: true, stream_options: { include_usage: true } }, requestOptions)
          .withResponse();
        // A server may answer a streamed request with the whole completion as JSON (the contract allows
        // it); read as events it would be an empty answer, so it is read as the completion it is.
        if (isJsonBody(response)) completion = (await response.json()) as ChatCompletion;
        else
          ({ completion, chunks } = await collectChatStream(
            stream,
            (text) => {
              chunks++;
              request.onTextDelta?.(text);
            },
            request.onToolCallDelta,
          ));
      } else {
        completion = await this.client.chat.completions.create(body, requestOptions);
      }
    } catch (error) {
      const mapped = mapOpenAIError(error, {
        baseURL: this.baseURL,
        model: request.model ?? this.modelId,
        timeoutMs,
        abortSignal: request.abortSignal,
        maxRetryAfterMs: this.maxRetryAfterMs,
        flex,
      });
      // A stream that breaks off after its headers throws the fetch body's own error, not an SDK one:
      // the provider went away mid-answer, which is worth another attempt.
      if (mapped === error && !(error instanceof AgentqError)) {
        throw new AgentqError(
          'PROVIDER_ERROR',
          `the model stream (model '${this.modelId}') broke off after ${chunks} text chunks: ${withoutAddress((error as Error).message ?? String(error), this.baseURL)}`,
          { retryable: true, cause: addressedCause(error, this.baseURL) },
        );
      }
      throw mapped;
    }
    return chatResponseOf(completion, { baseURL: this.baseURL, modelId: this.modelId });
  }
}

/** `application/json` (or `+json`); anything else, a missing content type included, is read as events. */
function isJsonBody(response: Response): boolean {
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}
