import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';

/** A streamed response folded back into one `ChatCompletion`, with how many chunks it took. */
interface CollectedChatStream {
  completion: ChatCompletion;
  chunks: number;
}

interface PartialToolCall {
  id: string;
  /** `function` unless the delta said otherwise (the caller refuses other types by name). */
  type: string;
  name: string;
  arguments: string;
}

/**
 * Reads a chat-completions stream to its end: content deltas go to `onTextDelta` as they come and are
 * joined; tool calls arrive in pieces keyed by `index` (id and name first, arguments in fragments, each
 * also handed to `onToolCallDelta`) and are joined per index; a refusal and a legacy `function_call` come
 * in fragments too and are joined; the usage comes in the last chunk (`stream_options.include_usage`). The result
 * has the shape of a non-streamed answer, so everything after it (memo, history and its validity) is unchanged.
 */
export async function collectChatStream(
  stream: AsyncIterable<ChatCompletionChunk>,
  onTextDelta?: (text: string) => void,
  onToolCallDelta?: (delta: { index: number; name: string; arguments: string }) => void,
): Promise<CollectedChatStream> {
  let id = '';
  let model = '';
  let created = 0;
  let content: string | null = null;
  let refusal: string | null = null;
  let functionCall: { name: string; arguments: string } | undefined;
  let finishReason: string | null = null;
  let usage: ChatCompletion['usage'];
  let serviceTier: ChatCompletion['service_tier'];
  let chunks = 0;
  const toolCalls = new Map<number, PartialToolCall>();
  // Images a compatible server streams (`delta.images`, outside OpenAI's contract): whole parts, kept in order.
  const images: unknown[] = [];
  for await (const chunk of stream) {
    chunks++;
    id ||= chunk.id ?? '';
    model ||= chunk.model ?? '';
    created ||= chunk.created ?? 0;
    if (chunk.usage) usage = chunk.usage;
    if (chunk.service_tier) serviceTier = chunk.service_tier;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const text = choice.delta?.content;
    if (typeof text === 'string' && text !== '') {
      content = (content ?? '') + text;
      onTextDelta?.(text);
    }
    const streamedImages = (choice.delta as { images?: unknown } | undefined)?.images;
    if (Array.isArray(streamedImages)) images.push(...(streamedImages as unknown[]));
    if (typeof choice.delta?.refusal === 'string') refusal = (refusal ?? '') + choice.delta.refusal;
    const legacy = choice.delta?.function_call;
    if (legacy) {
      functionCall ??= { name: '', arguments: '' };
      functionCall.name += legacy.name ?? '';
      functionCall.arguments += legacy.arguments ?? '';
    }
    for (const piece of choice.delta?.tool_calls ?? []) {
      const call = toolCalls.get(piece.index) ?? { id: '', type: 'function', name: '', arguments: '' };
      if (piece.id) call.id = piece.id;
      if (piece.type) call.type = piece.type;
      if (piece.function?.name) call.name += piece.function.name;
      if (piece.function?.arguments) {
        call.arguments += piece.function.arguments;
        onToolCallDelta?.({ index: piece.index, name: call.name, arguments: piece.function.arguments });
      }
      toolCalls.set(piece.index, call);
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  const calls = [...toolCalls.entries()].sort(([left], [right]) => left - right).map(([, call]) => call);
  const completion = {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        logprobs: null,
        finish_reason: finishReason,
        message: {
          role: 'assistant',
          content,
          refusal,
          ...(images.length > 0 ? { images } : {}),
          ...(functionCall ? { function_call: functionCall } : {}),
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((call) => ({
                  id: call.id,
                  type: call.type,
                  [call.type]: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        },
      },
    ],
    ...(usage ? { usage } : {}),
    ...(serviceTier ? { service_tier: serviceTier } : {}),
  } as ChatCompletion;
  return { completion, chunks };
}
