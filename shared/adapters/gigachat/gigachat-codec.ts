import { createHash } from 'node:crypto';
import { AgentqError } from '../../contracts/errors.js';
import { contentText, type Message } from '../../contracts/run-record.js';
import type {
  AssistantMessage,
  FinishReason,
  LanguageModelRequest,
  LanguageModelResponse,
  ToolCall,
  ToolDescription,
} from '../../ports/language-model.js';

/** A message of GigaChat's chat API. */
export interface GigaChatMessage {
  role: 'system' | 'user' | 'assistant' | 'function';
  content: string;
  /** The function an assistant message calls: its arguments are a JSON object, not a string. */
  function_call?: { name: string; arguments: Record<string, unknown> };
  /** The function a `function` message answers. */
  name?: string;
  /** The state GigaChat keeps for a function call, sent back on the assistant message that made it. */
  functions_state_id?: string;
}

/** A function as GigaChat's `functions` takes it. */
export interface GigaChatFunction {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  few_shot_examples?: { request: string; params: Record<string, unknown> }[];
}

/** The body of `POST /chat/completions`. */
export interface GigaChatRequestBody {
  model: string;
  messages: GigaChatMessage[];
  functions?: GigaChatFunction[];
  function_call?: 'auto' | 'none';
  temperature?: number;
  max_tokens?: number;
  stream: boolean;
}

/** A chat completion as GigaChat answers it (or as a stream folds back into one). */
export interface GigaChatCompletion {
  choices?: {
    index?: number;
    finish_reason?: string | null;
    message?: {
      role?: string;
      content?: string | null;
      function_call?: { name?: string; arguments?: Record<string, unknown> | string };
      functions_state_id?: string;
    };
  }[];
  created?: number;
  model?: string;
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number };
}

/**
 * The prefix of a tool call id that carries GigaChat's `functions_state_id`. GigaChat's calls have no id of
 * their own; the state id stands in for one, and the history keeps it there (a run's messages have no
 * provider fields), so the next request can send it back on the assistant message that made the call.
 */
export const STATE_ID_PREFIX = 'gigachat-state-';

/** The request body for GigaChat: tools as `functions` (their examples as `few_shot_examples`), tool calls and results as function messages. */
export function gigachatRequestBody(
  request: Omit<LanguageModelRequest, 'abortSignal'>,
  { model, stream }: { model: string; stream: boolean },
): GigaChatRequestBody {
  const tools = request.tools ?? [];
  return {
    model: request.model ?? model,
    messages: toGigaChatMessages(request.messages),
    ...(tools.length > 0 ? { functions: tools.map(toFunction), function_call: 'auto' as const } : {}),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
    stream,
  };
}

function toFunction(tool: ToolDescription): GigaChatFunction {
  const examples = tool.examples ?? [];
  return {
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    ...(examples.length > 0 ? { few_shot_examples: examples.map(({ request, params }) => ({ request, params })) } : {}),
  };
}

/**
 * A run's history in GigaChat's words. GigaChat makes one call per reply, so an assistant message with
 * several calls (written by another provider) becomes one assistant message per call, each followed by
 * its result: the order GigaChat would have produced them in.
 */
export function toGigaChatMessages(messages: readonly Message[]): GigaChatMessage[] {
  const out: GigaChatMessage[] = [];
  const answered = new Set<number>();
  messages.forEach((message, position) => {
    if (answered.has(position)) return;
    switch (message.role) {
      case 'system':
      case 'user':
        out.push({ role: message.role, content: contentText(message.content) });
        return;
      case 'tool':
        // A result whose call is not before it: sent under the name it carries, so nothing is lost.
        out.push(functionMessage(message.name ?? 'unknown_function', message.content));
        return;
      case 'assistant': {
        const calls = message.tool_calls ?? [];
        if (calls.length === 0) {
          out.push({ role: 'assistant', content: contentText(message.content) });
          return;
        }
        const results = resultsAfter(messages, position);
        calls.forEach((call, index) => {
          out.push(callMessage(call, index === 0 ? contentText(message.content) : ''));
          const result = results.get(call.id);
          if (result === undefined) return;
          answered.add(result);
          out.push(functionMessage(call.function.name, messages[result]!.content));
        });
        return;
      }
    }
  });
  return out;
}

/** The positions of the tool messages right after an assistant message, by the call id they answer. */
function resultsAfter(messages: readonly Message[], position: number): Map<string, number> {
  const results = new Map<string, number>();
  for (let next = position + 1; next < messages.length && messages[next]!.role === 'tool'; next++) {
    const id = messages[next]!.tool_call_id;
    if (id !== undefined && !results.has(id)) results.set(id, next);
  }
  return results;
}

function callMessage(call: ToolCall, content: string): GigaChatMessage {
  const stateId = call.id.startsWith(STATE_ID_PREFIX) ? call.id.slice(STATE_ID_PREFIX.length) : undefined;
  return {
    role: 'assistant',
    content,
    function_call: { name: call.function.name, arguments: argumentsObject(call.function.arguments) },
    ...(stateId ? { functions_state_id: stateId } : {}),
  };
}

/** GigaChat wants a call's arguments as an object; text that is not one (the model's own bad JSON) is kept under `input`. */
function argumentsObject(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) return parsed;
  } catch {
    // kept below
  }
  return { input: text };
}

/** GigaChat reads a function's result as a JSON object: other text (a plain string, an error) goes under `result`. */
function functionMessage(name: string, content: Message['content']): GigaChatMessage {
  const text = contentText(content);
  let json: string;
  try {
    json = isObject(JSON.parse(text)) ? text : JSON.stringify({ result: JSON.parse(text) as unknown });
  } catch {
    json = JSON.stringify({ result: text });
  }
  return { role: 'function', name, content: json };
}

/** A GigaChat completion as the port's response; one without a choice is a retryable PROVIDER_ERROR. */
export function gigachatResponseOf(completion: GigaChatCompletion, modelId: string): LanguageModelResponse {
  const choice = completion.choices?.[0];
  if (!choice?.message) {
    throw new AgentqError('PROVIDER_ERROR', `GigaChat answered without a choice (model '${modelId}')`, {
      retryable: true,
    });
  }
  const { message: reply } = choice;
  const toolCalls = reply.function_call?.name ? [toolCallOf(reply.function_call, reply, completion)] : [];
  const blacklisted = choice.finish_reason === 'blacklist';
  const content = typeof reply.content === 'string' ? reply.content : null;
  const refusal = blacklisted
    ? content?.trim() || 'GigaChat declined to answer: the request touches a topic it does not discuss'
    : undefined;
  const message: AssistantMessage = {
    role: 'assistant',
    // A call's reply carries empty text: none, as for the other providers.
    content: refusal !== undefined || (toolCalls.length > 0 && content === '') ? null : content,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
  const usage = completion.usage;
  return {
    message,
    usage: usage ? { inputTokens: usage.prompt_tokens ?? 0, outputTokens: usage.completion_tokens ?? 0 } : undefined,
    finishReason: refusal !== undefined ? 'refusal' : finishReasonOf(choice.finish_reason, toolCalls.length > 0),
    ...(refusal !== undefined ? { refusal } : {}),
    model: completion.model || modelId,
  };
}

function toolCallOf(
  call: { name?: string; arguments?: Record<string, unknown> | string },
  reply: { functions_state_id?: string },
  completion: GigaChatCompletion,
): ToolCall {
  const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
  // Without a state id the call's id comes from the answer itself, so reading the same answer again gives the same id.
  const id = reply.functions_state_id
    ? `${STATE_ID_PREFIX}${reply.functions_state_id}`
    : `call_${createHash('sha256')
        .update(`${completion.created ?? 0}\n${call.name}\n${args}`)
        .digest('hex')
        .slice(0, 16)}`;
  return { id, type: 'function', function: { name: call.name!, arguments: args } };
}

function finishReasonOf(reason: string | null | undefined, hasToolCall: boolean): FinishReason {
  switch (reason) {
    case 'stop':
    case 'length':
      return reason;
    case 'function_call':
      return 'tool_calls';
    default:
      // `error` (the model's arguments did not fit the function) and anything new: a call is still a call.
      return hasToolCall ? 'tool_calls' : 'other';
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
