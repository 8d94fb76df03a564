import { Buffer } from 'node:buffer';
import OpenAI from 'openai';
import type { CreateEmbeddingResponse } from 'openai/resources/embeddings';
import { AgentqError } from '../../contracts/errors.js';
import { estimateTextTokens } from '../../llm/estimate-tokens.js';
import type { Embedder, EmbedOptions, EmbedResult } from '../../ports/embedder.js';
import { OPENAI_DEFAULT_BASE_URL } from './openai-language-model.js';
import { mapOpenAIError } from './openai-error.js';
import { createOpenAIClient } from './create-openai-client.js';

export interface OpenAIEmbedderOptions {
  /** The embedding model id, e.g. `text-embedding-3-small`, `nomic-embed-text`. */
  model: string;
  /** Any OpenAI-compatible endpoint with `/embeddings`. @default 'https://api.openai.com/v1' */
  baseURL?: string;
  /** Sent as a bearer token; local servers usually need none. @default none */
  apiKey?: string;
  /** Per request (one batch), after which it fails with a retryable TIMEOUT. @default 60000 */
  timeoutMs?: number;
  /** `gen_ai.provider.name` on spans and the provider-limit key. @default 'openai' */
  provider?: string;
  /** Texts per request; longer lists are sent as several requests, in order. @default 128 */
  batchSize?: number;
  /** Ask the model for vectors this long (OpenAI's text-embedding-3 models shorten them). @default the model's own */
  dimensions?: number;
  /** A provider's Retry-After is obeyed up to this long. @default 600000 (10 min) */
  maxRetryAfterMs?: number;
  /** Your own SDK client; its retries are ignored (every request sets `maxRetries: 0`). */
  client?: OpenAI;
}

/**
 * The `Embedder` port over the openai SDK's `/v1/embeddings`: batched, errors mapped like chat calls
 * (an `AgentqError` with `retryable`), the vector length discovered from the first answer and checked on every later
 * one (a model swapped behind the same name would silently mix incomparable vectors otherwise).
 *
 * Floats are asked for explicitly: the SDK's default base64 decoding returns `[]` from servers that
 * ignore `encoding_format` and answer floats; a server that still answers base64 is decoded here.
 */
export class OpenAIEmbedder implements Embedder {
  readonly provider: string;
  readonly modelId: string;
  private readonly client: OpenAI;
  private readonly baseURL: string;
  private readonly timeoutMs: number;
  private readonly batchSize: number;
  private readonly requestedDimensions: number | undefined;
  private readonly maxRetryAfterMs: number;
  private discovered: number | undefined;

  constructor({
    model,
    baseURL = OPENAI_DEFAULT_BASE_URL,
    apiKey,
    timeoutMs = 60_000,
    provider = 'openai',
    batchSize = 128,
    dimensions,
    maxRetryAfterMs = 600_000,
    client,
  }: OpenAIEmbedderOptions) {
    if (model.trim() === '') throw new AgentqError('INVALID_INPUT', 'OpenAIEmbedder needs a model id (EMBED_MODEL)');
    if (!Number.isInteger(batchSize) || batchSize < 1)
      throw new AgentqError('INVALID_INPUT', `OpenAIEmbedder batchSize must be a positive integer, got ${batchSize}`);
    this.modelId = model;
    this.provider = provider;
    this.baseURL = client?.baseURL ?? baseURL;
    this.timeoutMs = timeoutMs;
    this.batchSize = batchSize;
    this.requestedDimensions = dimensions;
    this.maxRetryAfterMs = maxRetryAfterMs;
    this.client = client ?? createOpenAIClient({ baseURL, apiKey, timeoutMs });
  }

  /** The vector length, once a first answer told it. */
  get dimensions(): number | undefined {
    return this.discovered;
  }

  async embed(texts: readonly string[], { abortSignal }: EmbedOptions = {}): Promise<EmbedResult> {
    const vectors: number[][] = [];
    let inputTokens = 0;
    let model = this.modelId;
    for (let start = 0; start < texts.length; start += this.batchSize) {
      const batch = texts.slice(start, start + this.batchSize);
      const response = await this.request(batch, abortSignal);
      const ordered = this.vectorsOf(response, batch.length);
      vectors.push(...ordered);
      inputTokens +=
        response.usage?.prompt_tokens ??
        (await Promise.all(batch.map((text) => estimateTextTokens(text)))).reduce((sum, count) => sum + count, 0);
      model = response.model || model;
    }
    return { vectors, usage: { inputTokens }, model, dimensions: this.discovered ?? this.requestedDimensions ?? 0 };
  }

  private async request(
    batch: readonly string[],
    abortSignal: AbortSignal | undefined,
  ): Promise<CreateEmbeddingResponse> {
    try {
      return await this.client.embeddings.create(
        {
          model: this.modelId,
          // OpenAI rejects empty strings; a space embeds as "nothing" on every provider.
          input: batch.map((text) => (text.trim() === '' ? ' ' : text)),
          encoding_format: 'float',
          ...(this.requestedDimensions === undefined ? {} : { dimensions: this.requestedDimensions }),
        },
        { signal: abortSignal ?? null, timeout: this.timeoutMs, maxRetries: 0 },
      );
    } catch (error) {
      throw mapOpenAIError(error, {
        baseURL: this.baseURL,
        model: this.modelId,
        timeoutMs: this.timeoutMs,
        abortSignal,
        maxRetryAfterMs: this.maxRetryAfterMs,
      });
    }
  }

  /** The answer's vectors in input order, each checked against the discovered length. */
  private vectorsOf(response: CreateEmbeddingResponse, expected: number): number[][] {
    const data = response.data ?? [];
    if (data.length !== expected) {
      throw new AgentqError(
        'PROVIDER_ERROR',
        `the embeddings server answered ${data.length} vectors for ${expected} texts (model '${this.modelId}')`,
        { retryable: true },
      );
    }
    const vectors = new Array<number[]>(expected);
    for (const [position, item] of data.entries()) {
      const index = typeof item.index === 'number' ? item.index : position;
      const raw: unknown = item.embedding;
      const vector = typeof raw === 'string' ? decodeFloat32(raw) : Array.isArray(raw) ? (raw as number[]) : [];
      if (vector.length === 0 || index < 0 || index >= expected || vectors[index] !== undefined) {
        throw new AgentqError(
          'PROVIDER_ERROR',
          `the embeddings server answered an empty or misplaced vector (index ${index}) for model '${this.modelId}'`,
          { retryable: true },
        );
      }
      this.discovered ??= vector.length;
      if (vector.length !== this.discovered) {
        throw new AgentqError(
          'PROVIDER_ERROR',
          `the embedding model '${this.modelId}' answered a vector of ${vector.length} dimensions after answering ${this.discovered}; vectors of different lengths cannot be compared (was the model changed behind the same name?)`,
        );
      }
      vectors[index] = vector;
    }
    return vectors;
  }
}

/** Little-endian float32 bytes in base64, as OpenAI sends them with `encoding_format: 'base64'`. */
function decodeFloat32(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  const vector: number[] = [];
  for (let offset = 0; offset + 4 <= bytes.length; offset += 4) vector.push(bytes.readFloatLE(offset));
  return vector;
}
