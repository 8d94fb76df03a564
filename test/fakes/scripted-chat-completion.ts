/**
 * What the scripted OpenAI server answers to a chat request: a scripted message as a whole
 * `chat.completion` body, or as the `chat.completion.chunk` deltas of a streamed answer. Every shape
 * the published contract allows can be scripted: text, function tool calls, `custom` tool calls, a
 * legacy `function_call`, a refusal, any finish reason, an empty reply, and a whole JSON body for a
 * streamed request.
 */
import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';

/** A tool call the scripted assistant makes. */
export interface ScriptedToolCall {
  /** Tool call id; default `call_<chatIndex>_<position>`, deterministic so tests can match results to calls. */
  id?: string;
  /** `custom`: a custom tool call (`custom: {name, input}`, the arguments as its input). @default 'function' */
  type?: 'function' | 'custom';
  /** Function (or custom tool) name. */
  name: string;
  /** Arguments: an object is JSON-encoded; a string is sent as is (so tests can send malformed JSON on purpose). */
  arguments: Record<string, unknown> | string;
}

/** Token counts to report instead of the default estimate. `total_tokens` is their sum. */
export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** Fields every scripted response may carry. */
export interface ScriptedTiming {
  /** Latency before answering, in ms; overrides `defaultLatencyMs` for this request. */
  delayMs?: number;
}

/** An assistant message answered as a standard `chat.completion` body. */
export interface ScriptedMessage extends ScriptedTiming {
  /** Text of the answer; default `null` when there are tool calls, a function call or a refusal, `''` otherwise. */
  content?: string | null;
  /** Tool calls; when present and non-empty the default finish reason is `'tool_calls'`. */
  toolCalls?: ScriptedToolCall[];
  /** A legacy `function_call` reply (default finish reason `'function_call'`); streamed as `delta.function_call`. */
  functionCall?: { name: string; arguments: Record<string, unknown> | string };
  /** The model's refusal (`message.refusal`; streamed as `delta.refusal`). */
  refusal?: string;
  /**
   * Images as compatible servers return them (OpenRouter, Gemini's endpoint; not in OpenAI's contract):
   * `message.images` of `image_url` parts; streamed as one `delta.images` chunk before the finish.
   */
  images?: { type: 'image_url'; image_url: { url: string } }[];
  /**
   * Answer a streamed request (`stream: true`) with the whole completion as `application/json`, as the
   * contract allows. A `custom` tool call is always answered so: a stream chunk cannot carry one.
   */
  asJson?: boolean;
  /** Reported usage; default: an estimate of characters / 4 of the prompt and of the completion (see {@link estimateTokens}). */
  usage?: ScriptedUsage;
  /** `finish_reason`; default `'tool_calls'` with tool calls, `'stop'` otherwise (set `'length'` to test truncation). */
  finishReason?: 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';
  /** Streamed answers (`stream: true`): ms between chunks; overrides `streamChunkDelayMs`. */
  chunkDelayMs?: number;
  /** Streamed answers: drop the connection after this many content chunks (a provider dying mid-stream). */
  failAfterChunks?: number;
}

/** The choice of a scripted `chat.completion` body, as the stream reads it back. */
interface ChoiceBody {
  message: {
    content: string | null;
    refusal: string | null;
    images?: unknown[];
    function_call?: { name: string; arguments: string };
    tool_calls?: { id: string; type: string; function?: { name: string; arguments: string } }[];
  };
  finish_reason: string;
}

/** One chunk of a streamed answer: its delta, its finish reason, and whether it is paced (and a content chunk). */
export interface StreamPiece {
  delta: Record<string, unknown>;
  finishReason?: string;
  /** Waits `chunkDelayMs` before it is sent (text, refusal and argument fragments). */
  paced: boolean;
  /** A content chunk: counted by `failAfterChunks` and logged in `chunkTimes`. */
  content: boolean;
}

/** A deterministic token estimate: characters / 4, rounded up, at least 1 for non-empty text. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** True when a streamed request gets the whole completion as JSON instead of events. */
export function answersStreamAsJson(message: ScriptedMessage): boolean {
  return message.asJson === true || (message.toolCalls ?? []).some((call) => call.type === 'custom');
}

/** The `chat.completion` body of a scripted message. */
export function chatCompletion(message: ScriptedMessage, body: ChatCompletionCreateParams, chatIndex: number): unknown {
  const argumentsOf = (value: Record<string, unknown> | string) =>
    typeof value === 'string' ? value : JSON.stringify(value);
  const toolCalls = (message.toolCalls ?? []).map((call, position) => {
    const id = call.id ?? `call_${chatIndex}_${position}`;
    return call.type === 'custom'
      ? { id, type: 'custom', custom: { name: call.name, input: argumentsOf(call.arguments) } }
      : { id, type: 'function', function: { name: call.name, arguments: argumentsOf(call.arguments) } };
  });
  const legacy = message.functionCall;
  const functionCall = legacy && { name: legacy.name, arguments: argumentsOf(legacy.arguments) };
  const hasToolCalls = toolCalls.length > 0;
  const silent = hasToolCalls || functionCall !== undefined || message.refusal !== undefined;
  const content = message.content !== undefined ? message.content : silent ? null : '';
  const completionText = [
    content ?? '',
    message.refusal ?? '',
    ...(message.toolCalls ?? []).map((call) => call.name + argumentsOf(call.arguments)),
    functionCall ? functionCall.name + functionCall.arguments : '',
  ].join('');
  const usage = message.usage ?? {
    prompt_tokens: estimateTokens(promptText(body)),
    completion_tokens: estimateTokens(completionText),
  };
  return {
    id: `chatcmpl-scripted-${chatIndex}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          refusal: message.refusal ?? null,
          ...(message.images ? { images: message.images } : {}),
          ...(functionCall ? { function_call: functionCall } : {}),
          ...(hasToolCalls ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: message.finishReason ?? (hasToolCalls ? 'tool_calls' : functionCall ? 'function_call' : 'stop'),
      },
    ],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/**
 * A completion's choice as OpenAI streams it: the role first, the content a word per chunk, the refusal
 * a word per chunk, each tool call's name then its arguments in fragments (words, cut anywhere in the
 * JSON), a legacy function call likewise, then the finish reason.
 */
export function chatStreamPieces(completion: unknown): StreamPiece[] {
  const choice = (completion as { choices: ChoiceBody[] }).choices[0]!;
  const { message } = choice;
  const pieces: StreamPiece[] = [{ delta: { role: 'assistant', content: '' }, paced: false, content: false }];
  for (const word of fragments(message.content ?? ''))
    pieces.push({ delta: { content: word }, paced: true, content: true });
  for (const word of fragments(message.refusal ?? ''))
    pieces.push({ delta: { refusal: word }, paced: true, content: false });
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    const { name, arguments: text } = call.function!;
    pieces.push({
      delta: { tool_calls: [{ index, id: call.id, type: 'function', function: { name, arguments: '' } }] },
      paced: false,
      content: false,
    });
    for (const piece of fragments(text))
      pieces.push({ delta: { tool_calls: [{ index, function: { arguments: piece } }] }, paced: true, content: false });
  }
  if (message.function_call) {
    pieces.push({
      delta: { function_call: { name: message.function_call.name, arguments: '' } },
      paced: false,
      content: false,
    });
    for (const piece of fragments(message.function_call.arguments))
      pieces.push({ delta: { function_call: { arguments: piece } }, paced: true, content: false });
  }
  if (message.images) pieces.push({ delta: { images: message.images }, paced: false, content: false });
  pieces.push({ delta: {}, finishReason: choice.finish_reason, paced: false, content: false });
  return pieces;
}

function fragments(text: string): string[] {
  return text.match(/\s*\S+\s*|\s+/g) ?? [];
}

/** The text the default prompt-token estimate counts: message contents (text parts) and tool-call arguments. */
export function promptText(body: ChatCompletionCreateParams): string {
  let text = '';
  for (const message of body.messages as unknown[]) {
    if (!isObject(message)) continue;
    const content = message['content'];
    if (typeof content === 'string') text += content;
    else if (Array.isArray(content)) {
      for (const part of content) if (isObject(part) && typeof part['text'] === 'string') text += part['text'];
    }
    const toolCalls = message['tool_calls'];
    if (Array.isArray(toolCalls)) {
      for (const call of toolCalls) {
        const functionCall = isObject(call) ? call['function'] : undefined;
        if (isObject(functionCall))
          text += String(functionCall['name'] ?? '') + String(functionCall['arguments'] ?? '');
      }
    }
  }
  return text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
