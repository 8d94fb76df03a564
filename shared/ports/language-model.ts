import type { Message } from '../contracts/run-record.js';

/** An assistant message as a model returns it: text (never content parts), tool calls, or both. */
export type AssistantMessage = Omit<Message, 'role' | 'content'> & { role: 'assistant'; content: string | null };

/** A tool call inside an assistant message (OpenAI chat-completions shape). */
export type ToolCall = NonNullable<Message['tool_calls']>[number];

/** A worked example of a tool's use: a user's request and the arguments the tool should be called with. */
export interface ToolExample {
  /** What a user might ask, in their words. */
  request: string;
  /** The arguments for that request; they satisfy the tool's input schema. */
  params: Record<string, unknown>;
}

/** A tool as the model sees it: a name, what it does, and a JSON Schema of its arguments. */
export interface ToolDescription {
  name: string;
  description: string;
  /** JSON Schema (an object schema) of the arguments. */
  parameters: Record<string, unknown>;
  /**
   * Worked examples, for providers that read them (GigaChat's `few_shot_examples`); an OpenAI-compatible
   * request has no field for them and renders them into the description only when asked. @default none
   */
  examples?: ToolExample[];
}

/** Ask for plain text, any JSON object, or JSON matching a schema. */
export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean };

export interface LanguageModelRequest {
  /** The conversation so far, system prompt first. */
  messages: Message[];
  /** Tools the model may call. @default none */
  tools?: ToolDescription[];
  /** Upper bound on the response's tokens. @default the provider's own limit */
  maxTokens?: number;
  /** @default the provider's default */
  temperature?: number;
  /** Another model on the same endpoint for this request (a run's `model` option). @default the adapter's model */
  model?: string;
  /** @default text */
  responseFormat?: ResponseFormat;
  /** The step's signal: cancellation, timeout, deadline, shutdown. */
  abortSignal?: AbortSignal;
  /**
   * Called with each piece of response text as it arrives, when the model streams. Live display only:
   * the returned message is the complete response and the only one that counts. @default none
   */
  onTextDelta?: (text: string) => void;
  /**
   * Called with each piece of a tool call's arguments as it arrives (`name` is the call's function,
   * known from its first piece), when the model streams. Live display only. @default none
   */
  onToolCallDelta?: (delta: { index: number; name: string; arguments: string }) => void;
  /**
   * The provider's processing tier for this request: `flex` is cheaper and slower, and the provider may
   * refuse it when busy (FLEX_UNAVAILABLE). Providers without tiers ignore it. @default the provider's default
   */
  serviceTier?: 'flex';
  /**
   * Keeps requests that share a prefix on one provider cache (OpenAI's `prompt_cache_key`); providers without
   * one ignore it. @default none
   */
  promptCacheKey?: string;
}

/** Tokens a response cost, as the provider counts them. */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /**
   * The part of `inputTokens` the provider read from its prompt cache (priced at its cached rate), when it
   * says (OpenAI's `usage.prompt_tokens_details.cached_tokens`). @default 0
   */
  cachedInputTokens?: number;
}

/**
 * Why the model stopped, as the provider said: `refusal` when it refused (the text is on the
 * response's `refusal`); `other` only for a reason the port has no word for (or none sent).
 */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'refusal' | 'other';

/** A tool call of a kind agentq cannot run (only `function` calls run), by its type and tool name. */
export interface UnsupportedToolCall {
  type: string;
  name: string;
}

/**
 * An image the model returned, kept as a part of the result: its bytes (`b64`, with `mimeType`) or where it is
 * (`url`). OpenAI's published chat-completions contract has no image output; compatible servers that return
 * images (OpenRouter, Gemini's compatible endpoint: `message.images` of `image_url` parts) and other adapters
 * report them here.
 */
export type ImageOutput = { type: 'image'; mimeType?: string } & ({ b64: string } | { url: string });

export interface LanguageModelResponse {
  message: AssistantMessage;
  /** Images the model returned beside its message, in its order. @default none */
  images?: ImageOutput[];
  /** The provider's own count; undefined when it sent none (the caller may estimate). */
  usage: TokenUsage | undefined;
  finishReason: FinishReason;
  /** The model's refusal, in its own words, when it refused instead of answering. @default none */
  refusal?: string;
  /** Tool calls the response made that are not `function` calls (e.g. `custom`), left out of the message. @default none */
  unsupportedToolCalls?: UnsupportedToolCall[];
  /** The model that answered, as the provider names it (may carry a version suffix). */
  model: string;
  /** The provider's response id, when it sends one. */
  responseId?: string;
  /** The tier that answered, when the provider says (OpenAI's `service_tier`: `flex`, `default`, …). @default not said */
  serviceTier?: string;
}

/**
 * A chat model (docs/architecture.md: vendor SDKs live only behind ports). One method: a single request and its
 * response. Implementations do not retry: they throw an `AgentqError` whose `retryable` and
 * `retryAfterMs` tell the step processor what to do, so retries are counted in one place (docs/reference/errors.md).
 */
export interface LanguageModel {
  /** The provider, as the OpenTelemetry GenAI conventions name it (`gen_ai.provider.name`), e.g. `openai`. */
  readonly provider: string;
  /** The model requested, e.g. `gpt-4o-mini` or `llama3.2`. */
  readonly modelId: string;
  /**
   * The processing tiers beside the default this provider offers (`serviceTier` of a request), so a planner
   * can ask before it sends one. @default none
   */
  readonly tiers?: readonly 'flex'[];
  generate(request: LanguageModelRequest): Promise<LanguageModelResponse>;
}
