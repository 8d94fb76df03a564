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
  ImageOutput,
  LanguageModelRequest,
  LanguageModelResponse,
  ResponseFormat,
  TokenUsage,
  ToolDescription,
  UnsupportedToolCall,
} from '../../ports/language-model.js';
import { contentText, type Message } from '../../contracts/run-record.js';

/** How a request is encoded: the model asked when the request names none, and the name of its token limit. */
interface ChatBodyOptions {
  model: string;
  maxTokensParameter: 'max_tokens' | 'max_completion_tokens';
  /**
   * A tool's examples have no field in a chat-completions request: `description` appends them to the
   * tool's description, `omit` leaves them out. @default 'omit'
   */
  toolExamples?: 'omit' | 'description';
}

/**
 * The chat-completions body of a request, not streamed: what a live call sends (it adds only `stream`
 * and `stream_options` when it streams) and what a line of a Batch API file carries, so a call made
 * through a provider batch asks exactly what the live call would.
 */
export function chatRequestBody(
  request: Omit<LanguageModelRequest, 'abortSignal'>,
  { model, maxTokensParameter, toolExamples = 'omit' }: ChatBodyOptions,
): ChatCompletionCreateParamsNonStreaming {
  return {
    model: request.model ?? model,
    messages: request.messages.map(toMessageParam),
    ...(request.tools && request.tools.length > 0
      ? { tools: request.tools.map((tool) => toToolParam(tool, toolExamples)) }
      : {}),
    ...(request.maxTokens === undefined ? {} : { [maxTokensParameter]: request.maxTokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.responseFormat ? { response_format: toResponseFormat(request.responseFormat) } : {}),
    ...(request.serviceTier ? { service_tier: request.serviceTier } : {}),
    ...(request.promptCacheKey ? { prompt_cache_key: request.promptCacheKey } : {}),
  };
}

/** A chat completion as the port's response; a completion without a choice is a retryable PROVIDER_ERROR. */
export function chatResponseOf(
  completion: ChatCompletion,
  { baseURL, modelId }: { baseURL: string; modelId: string },
): LanguageModelResponse {
  const choice = completion.choices?.[0];
  if (!choice?.message) {
    throw new AgentqError('PROVIDER_ERROR', `the model server answered without a choice (model '${modelId}')`, {
      retryable: true,
      details: { responseId: completion.id },
      cause: new Error(`the model server is ${baseURL}`),
    });
  }
  const seen = new Set<string>();
  const unsupported: UnsupportedToolCall[] = [];
  const toolCalls = (choice.message.tool_calls ?? []).flatMap((call, index) => {
    if (call.type !== 'function') {
      // Kept on the response, not dropped: the caller fails the step naming it, rather than reading "no answer".
      unsupported.push({ type: String(call.type), name: toolNameOf(call) });
      return [];
    }
    // Some local servers send no id, or the same one twice: each result must name exactly one call, or the history
    // could not be sent back to the model.
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
  // A legacy `function_call` reply is one tool call: it runs like any other. Its id comes from the
  // completion's, so it is the same whenever this response is read again (memo, batch results).
  const legacy = choice.message.function_call;
  if (legacy?.name && toolCalls.length === 0)
    toolCalls.push({
      id: `call_${completion.id || 'legacy'}_function`,
      type: 'function' as const,
      function: { name: legacy.name, arguments: legacy.arguments ?? '' },
    });
  const refusal =
    typeof choice.message.refusal === 'string' && choice.message.refusal !== '' ? choice.message.refusal : undefined;
  const message: AssistantMessage = {
    role: 'assistant',
    content: choice.message.content ?? null,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
  const usage = completion.usage;
  const images = imagesOf(choice.message);
  return {
    message,
    ...(images.length > 0 ? { images } : {}),
    usage: usage ? usageOf(usage) : undefined,
    finishReason: refusal ? 'refusal' : toFinishReason(choice.finish_reason, toolCalls.length > 0),
    ...(refusal ? { refusal } : {}),
    ...(unsupported.length > 0 ? { unsupportedToolCalls: unsupported } : {}),
    model: completion.model || modelId,
    ...(completion.id ? { responseId: completion.id } : {}),
    ...(completion.service_tier ? { serviceTier: completion.service_tier } : {}),
  };
}

/**
 * The images of a message: not in OpenAI's contract, but compatible servers that make images (OpenRouter,
 * Gemini's compatible endpoint) send `images: [{type: 'image_url', image_url: {url}}]`, a `data:` URL or an
 * address. Kept rather than dropped; anything else there is ignored.
 */
function imagesOf(message: object): ImageOutput[] {
  const images = (message as { images?: unknown }).images;
  if (!Array.isArray(images)) return [];
  return images.flatMap((image: unknown) => {
    const url = (image as { image_url?: { url?: unknown } } | null)?.image_url?.url;
    if (typeof url !== 'string' || url === '') return [];
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    return [data ? { type: 'image' as const, mimeType: data[1]!, b64: data[2]! } : { type: 'image' as const, url }];
  });
}

/** The tool a call of another type names (a `custom` call names it under `custom`). */
function toolNameOf(call: object): string {
  const fields = call as Record<string, { name?: unknown } | undefined>;
  const named = fields[String((call as { type?: unknown }).type)] ?? fields['function'];
  return typeof named?.name === 'string' ? named.name : '(unnamed)';
}

function toMessageParam(message: Message): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: contentText(message.content), ...(message.name ? { name: message.name } : {}) };
    case 'user':
      // Content parts (text and images) go to the model as they are: OpenAI's own format.
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

function toToolParam(tool: ToolDescription, toolExamples: 'omit' | 'description'): ChatCompletionTool {
  const examples = toolExamples === 'description' ? (tool.examples ?? []) : [];
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: examples.length > 0 ? describedWithExamples(tool.description, examples) : tool.description,
      parameters: tool.parameters,
    },
  };
}

/** A description followed by its examples, each a request and the arguments as JSON, for models that read only text. */
export function describedWithExamples(description: string, examples: NonNullable<ToolDescription['examples']>): string {
  const lines = examples.map((example) => `- ${JSON.stringify(example.request)} → ${JSON.stringify(example.params)}`);
  return `${description}\n\nExamples (request → arguments):\n${lines.join('\n')}`;
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

/** The port's usage of a completion's; cached input tokens only when the provider counted some. */
export function usageOf(usage: NonNullable<ChatCompletion['usage']>): TokenUsage {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    inputTokens: usage.prompt_tokens ?? 0,
    outputTokens: usage.completion_tokens ?? 0,
    ...(cached > 0 ? { cachedInputTokens: cached } : {}),
  };
}
