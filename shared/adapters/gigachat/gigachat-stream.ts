import type { GigaChatCompletion } from './gigachat-codec.js';

/** One chunk of GigaChat's stream: a delta of the reply, and on the last ones the finish reason and usage. */
interface GigaChatChunk {
  choices?: {
    delta?: {
      role?: string;
      content?: string;
      function_call?: { name?: string; arguments?: Record<string, unknown> | string };
      functions_state_id?: string;
    };
    finish_reason?: string | null;
  }[];
  created?: number;
  model?: string;
  usage?: GigaChatCompletion['usage'];
}

/** A streamed reply folded back into one completion, with how many text chunks it took. */
export interface CollectedGigaChatStream {
  completion: GigaChatCompletion;
  chunks: number;
}

/**
 * Reads GigaChat's server-sent events (`data: {chunk}` … `data: [DONE]`) to their end: text deltas go to
 * `onTextDelta` as they come and are joined; a function call comes whole (its arguments an object) or in
 * pieces, and is joined; the state id, finish reason and usage are taken wherever a chunk carries them.
 * The result has the shape of a reply that was not streamed, so it is read the same way.
 */
export async function collectGigaChatStream(
  body: AsyncIterable<Uint8Array>,
  onTextDelta?: (text: string) => void,
  onToolCallDelta?: (delta: { index: number; name: string; arguments: string }) => void,
): Promise<CollectedGigaChatStream> {
  const folded = {
    content: null as string | null,
    name: '',
    args: undefined as Record<string, unknown> | string | undefined,
    stateId: undefined as string | undefined,
    finishReason: null as string | null,
    created: 0,
    model: '',
    usage: undefined as GigaChatCompletion['usage'],
  };
  let chunks = 0;
  const take = (chunk: GigaChatChunk) => {
    folded.created ||= chunk.created ?? 0;
    folded.model ||= chunk.model ?? '';
    if (chunk.usage) folded.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      folded.content = (folded.content ?? '') + delta.content;
      chunks++;
      onTextDelta?.(delta.content);
    }
    if (delta.functions_state_id) folded.stateId = delta.functions_state_id;
    const call = delta.function_call;
    if (call) {
      folded.name += call.name ?? '';
      folded.args = joinArguments(folded.args, call.arguments);
      if (call.arguments !== undefined)
        onToolCallDelta?.({
          index: 0,
          name: folded.name,
          arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
        });
    }
    if (choice.finish_reason) folded.finishReason = choice.finish_reason;
  };
  for await (const data of serverSentData(body)) {
    if (data === '[DONE]') break;
    take(JSON.parse(data) as GigaChatChunk);
  }
  const completion: GigaChatCompletion = {
    choices: [
      {
        index: 0,
        finish_reason: folded.finishReason,
        message: {
          role: 'assistant',
          content: folded.content ?? (folded.name ? '' : null),
          ...(folded.name ? { function_call: { name: folded.name, arguments: folded.args ?? {} } } : {}),
          ...(folded.stateId ? { functions_state_id: folded.stateId } : {}),
        },
      },
    ],
    created: folded.created,
    model: folded.model,
    ...(folded.usage ? { usage: folded.usage } : {}),
  };
  return { completion, chunks };
}

/** Arguments sent whole (an object, merged if several chunks carry parts) or as text fragments (joined). */
function joinArguments(
  sofar: Record<string, unknown> | string | undefined,
  piece: Record<string, unknown> | string | undefined,
): Record<string, unknown> | string | undefined {
  if (piece === undefined) return sofar;
  if (typeof piece === 'string') return (typeof sofar === 'string' ? sofar : '') + piece;
  return { ...(typeof sofar === 'object' ? sofar : {}), ...piece };
}

/** The `data` of each server-sent event, an event's data lines joined, however the bytes were cut. */
async function* serverSentData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  const eventsIn = function* (text: string): Generator<string> {
    const data = text
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
    if (data.length > 0) yield data.join('\n');
  };
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let end: RegExpExecArray | null;
    while ((end = /\r?\n\r?\n/.exec(buffer)) !== null) {
      const event = buffer.slice(0, end.index);
      buffer = buffer.slice(end.index + end[0].length);
      yield* eventsIn(event);
    }
  }
  buffer += decoder.decode();
  if (buffer.trim() !== '') yield* eventsIn(buffer);
}
