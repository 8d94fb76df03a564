import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { AgentqError } from '../../contracts/errors.js';
import type {
  AssistantMessage,
  FinishReason,
  LanguageModel,
  LanguageModelRequest,
  LanguageModelResponse,
  ResponseFormat,
} from '../../ports/language-model.js';
import { contentText, type Message } from '../../contracts/run-record.js';
import { collectChatStream } from './collect-chat-stream.js';
import { mapOpenAIError } from './openai-error.js';

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
  /** Your own SDK client (custom fetch, proxy, headers); its retries are ignored (every request sets `maxRetries: 0`). */
  client?: OpenAI;
}

/**
 * The `LanguageModel` port over the openai SDK's chat completions, with tools. The SDK's own retries
 * are off: every failure is mapped to an `AgentqError` (DESIGN §7) and the step's retry policy counts
 * the attempts.
 */
export class OpenAILanguageModel implements LanguageModel {
  readonly provider: string;
  readonly modelId: string;
  private readonly client: OpenAI;
  private readonly baseURL: string;
  private readonly timeoutMs: number;
  private readonly maxTokensParameter: 'max_tokens' | 'max_completion_tokens';
  private readonly maxRetryAfterMs: number;
  private readonly stream: boolean;

  constructor({
    model,
    baseURL = OPENAI_DEFAULT_BASE_URL,
    apiKey,
    timeoutMs = 60_000,
    provider = 'openai',
    maxTokensParameter = 'max_tokens',
    maxRetryAfterMs = 600_000,
    stream = true,
    client,
  }: OpenAILanguageModelOptions) {
    if (model.trim() === '') throw new AgentqError('INVALID_INPUT', 'OpenAILanguageModel needs a model id (LLM_MODEL)');
    this.modelId = model;
    this.provider = provider;
    this.baseURL = client?.baseURL ?? baseURL;
    this.timeoutMs = timeoutMs;
    this.maxTokensParameter = maxTokensParameter;
    this.maxRetryAfterMs = maxRetryAfterMs;
    this.stream = stream;
    // Every option the SDK would otherwise read from process.env is given: the config is the only env reader.
    this.client =
      client ??
      new OpenAI({
        baseURL,
        // The SDK refuses to start without a key; local servers ignore the placeholder.
        apiKey: apiKey ?? 'unused',
        organization: null,
        project: null,
        webhookSecret: null,
        maxRetries: 0,
        timeout: timeoutMs,
        logLevel: 'warn',
      });
  }

  async generate(request: LanguageModelRequest): Promise<LanguageModelResponse> {
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: request.model ?? this.modelId,
      messages: request.messages.map(toMessageParam),
      ...(request.tools && request.tools.length > 0 ? { tools: request.tools.map(toToolParam) } : {}),
      ...(request.maxTokens === undefined ? {} : { [this.maxTokensParameter]: request.maxTokens }),
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      ...(request.responseFormat ? { response_format: toResponseFormat(request.responseFormat) } : {}),
    };
    const requestOptions = { signal: request.abortSignal ?? null, timeout: this.timeoutMs, maxRetries: 0 };
    let completion: ChatCompletion;
    let chunks = 0;
    try {
      if (this.stream) {
        const stream = await this.client.chat.completions.create(
          { ...body, stream: true, stream_options: { include_usage: true } },
          requestOptions,
        );
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
        timeoutMs: this.timeoutMs,
        abortSignal: request.abortSignal,
        maxRetryAfterMs: this.maxRetryAfterMs,
      });
      // A stream that breaks off after its headers throws the fetch body's own error, not an SDK one:
      // the provider went away mid-answer, which is worth another attempt.
      if (mapped === error && !(error instanceof AgentqError)) {
        throw new AgentqError(
          'PROVIDER_ERROR',
          `the model stream from ${this.baseURL} (model '${this.modelId}') broke off after ${chunks} text chunks: ${(error as Error).message ?? String(error)}`,
          {
            retryable: true,
            cause: error,
          },
        );
      }
      throw mapped;
    }
    return this.toResponse(completion);
  }

  private toResponse(completion: ChatCompletion): LanguageModelResponse {
    const choice = completion.choices?.[0];
    if (!choice?.message) {
      throw new AgentqError(
        'PROVIDER_ERROR',
        `the model server at ${this.baseURL} answered without a choice (model '${this.modelId}')`,
        {
          retryable: true,
          details: { responseId: completion.id },
        },
      );
    }
    const seen = new Set<string>();
    const toolCalls = (choice.message.tool_calls ?? []).flatMap((call, index) => {
      if (call.type !== 'function') return [];
      // Some local servers send no id, or the same one twice: each result must name exactly one call (I3).
      let id = call.id || `call_${index}`;
      if (seen.has(id)) id = `${id}_${index}`;
      seen.add(id);
      return [
        {
          id,
          type: 'function' as const,
          function: { name: call.function.name, arguments: call.function.arguments ?? '' },
        },
      ];
    });
    const message: AssistantMessage = {
      role: 'assistant',
      content: choice.message.content ?? null,
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    };
    const usage = completion.usage;
    return {
      message,
      usage: usage ? { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 } : undefined,
      finishReason: toFinishReason(choice.finish_reason, toolCalls.length > 0),
      model: completion.model || this.modelId,
      ...(completion.id ? { responseId: completion.id } : {}),
    };
  }
}

function toMessageParam(message: Message): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: contentText(message.content), ...(message.name ? { name: message.name } : {}) };
    case 'user':
      // Content parts (text and images) go to the model as they are: OpenAI's own format (issue 40).
      return { role: 'user', content: message.content ?? '', ...(message.name ? { name: message.name } : {}) };
    case 'tool':
      return { role: 'tool', content: contentText(message.content), tool_call_id: message.tool_call_id ?? '' };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content === null ? null : contentText(message.content),
        ...(message.name ? { name: message.name } : {}),
        ...(message.tool_calls && message.tool_calls.length > 0 ? { tool_calls: message.tool_calls } : {}),
      };
  }
}

function toToolParam(tool: {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

function toResponseFormat(
  format: ResponseFormat,
): NonNullable<ChatCompletionCreateParamsNonStreaming['response_format']> {
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.strict === undefined ? {} : { strict: format.strict }),
    },
  };
}

function toFinishReason(reason: string | null | undefined, hasToolCalls: boolean): FinishReason {
  switch (reason) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return reason;
    case 'function_call':
      return 'tool_calls';
    default:
      // Some servers leave it null or use their own words; tool calls still mean tool calls.
      return hasToolCalls ? 'tool_calls' : 'other';
  }
}
