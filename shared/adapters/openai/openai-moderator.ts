import OpenAI from 'openai';
import type { ModerationVerdict, Moderator } from '../../ports/moderator.js';
import { AgentqError } from '../../contracts/errors.js';
import { mapOpenAIError } from './openai-error.js';
import { createOpenAIClient } from './create-openai-client.js';

interface OpenAIModeratorOptions {
  /** The moderation model, e.g. `omni-moderation-latest` (MODERATION_MODEL). */
  model: string;
  /** @default https://api.openai.com/v1 */
  baseURL?: string;
  apiKey?: string;
  /** @default 60000 */
  timeoutMs?: number;
}

/**
 * The `Moderator` port over an OpenAI-compatible `/v1/moderations` endpoint; no SDK retries (docs/reference/errors.md).
 */
export class OpenAIModerator implements Moderator {
  readonly modelId: string;
  private readonly client: OpenAI;
  private readonly baseURL: string;
  private readonly timeoutMs: number;

  constructor({ model, baseURL = 'https://api.openai.com/v1', apiKey, timeoutMs = 60_000 }: OpenAIModeratorOptions) {
    this.modelId = model;
    this.baseURL = baseURL;
    this.timeoutMs = timeoutMs;
    this.client = createOpenAIClient({ baseURL, apiKey, timeoutMs });
  }

  async moderate(text: string, { abortSignal }: { abortSignal?: AbortSignal } = {}): Promise<ModerationVerdict> {
    let response: OpenAI.Moderations.ModerationCreateResponse;
    try {
      response = await this.client.moderations.create(
        { model: this.modelId, input: text },
        { signal: abortSignal ?? null, timeout: this.timeoutMs, maxRetries: 0 },
      );
    } catch (error) {
      throw mapOpenAIError(error, {
        baseURL: this.baseURL,
        model: this.modelId,
        timeoutMs: this.timeoutMs,
        abortSignal,
        maxRetryAfterMs: 600_000,
      });
    }
    const result = response.results?.[0];
    if (!result || typeof result.flagged !== 'boolean') {
      throw new AgentqError(
        'PROVIDER_ERROR',
        `the moderation server answered without a result (model '${this.modelId}')`,
        { retryable: true },
      );
    }
    const categories = Object.entries(result.categories ?? {})
      .filter(([, flagged]) => flagged === true)
      .map(([category]) => category);
    return { flagged: result.flagged, categories };
  }
}
