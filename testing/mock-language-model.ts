import type {
  FinishReason,
  LanguageModel,
  LanguageModelRequest,
  LanguageModelResponse,
  TokenUsage,
} from '../shared/ports/language-model.js';

/** A tool call a scripted reply makes: `arguments` as an object (sent as JSON) or as the raw JSON text. */
export interface MockToolCall {
  name: string;
  arguments?: Record<string, unknown> | string;
  /** @default `call_<call>_<index>` */
  id?: string;
}

/**
 * A scripted reply in short: text, tool calls, or a refusal; `stream` sends the text in these pieces
 * to the request's `onTextDelta` first (as a streaming provider does), so they must join to `text`.
 */
export interface MockReply {
  text?: string;
  toolCalls?: readonly MockToolCall[];
  /** The model refuses in these words: no content, finish reason `refusal`. */
  refusal?: string;
  stream?: readonly string[];
  /** @default { inputTokens: 10, outputTokens: 5 } */
  usage?: TokenUsage;
  /** @default tool_calls with tool calls, refusal with a refusal, else stop */
  finishReason?: FinishReason;
}

/** One scripted result: a reply, a full response, a text answer, or an error to throw. */
export type MockResult = MockReply | LanguageModelResponse | string | Error;

export interface MockLanguageModelOptions {
  /** @default 'mock-model' */
  modelId?: string;
  /** @default 'mock' */
  provider?: string;
  /**
   * What `generate` answers: one result for every call, a function of the request and the call's
   * 0-based index, or an array of per-call results (a call past its end fails loudly).
   * @default the text 'mock answer'
   */
  generate?:
    | MockResult
    | readonly MockResult[]
    | ((request: LanguageModelRequest, index: number) => MockResult | Promise<MockResult>);
}

const DEFAULT_USAGE: TokenUsage = { inputTokens: 10, outputTokens: 5 };

/** A `LanguageModel` test double (AI SDK style): scripted answers; records every request in `calls`. */
export class MockLanguageModel implements LanguageModel {
  readonly modelId: string;
  readonly provider: string;
  /** Every request received, in order. */
  readonly calls: LanguageModelRequest[] = [];
  private readonly script: NonNullable<MockLanguageModelOptions['generate']>;

  constructor({ modelId = 'mock-model', provider = 'mock', generate = 'mock answer' }: MockLanguageModelOptions = {}) {
    this.modelId = modelId;
    this.provider = provider;
    this.script = generate;
  }

  async generate(request: LanguageModelRequest): Promise<LanguageModelResponse> {
    const index = this.calls.length;
    this.calls.push(request);
    let result: MockResult | undefined;
    if (typeof this.script === 'function') result = await this.script(request, index);
    else if (Array.isArray(this.script)) {
      result = (this.script as readonly MockResult[])[index];
      if (result === undefined)
        throw new Error(
          `MockLanguageModel: no result scripted for call ${index + 1} (the array has ${this.script.length})`,
        );
    } else result = this.script as MockResult;
    if (result instanceof Error) throw result;
    if (typeof result === 'string') result = { text: result };
    if ('message' in result) return result;
    return this.reply(result, request, index);
  }

  private reply(reply: MockReply, request: LanguageModelRequest, index: number): LanguageModelResponse {
    const { text, toolCalls = [], refusal, stream } = reply;
    if (stream) {
      if (stream.join('') !== (text ?? ''))
        throw new Error(`MockLanguageModel: the stream of call ${index + 1} does not join to its text`);
      for (const piece of stream) request.onTextDelta?.(piece);
    }
    const calls = toolCalls.map((call, position) => ({
      id: call.id ?? `call_${index + 1}_${position}`,
      type: 'function' as const,
      function: {
        name: call.name,
        arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
      },
    }));
    const finishReason: FinishReason =
      reply.finishReason ?? (refusal !== undefined ? 'refusal' : calls.length > 0 ? 'tool_calls' : 'stop');
    return {
      message: {
        role: 'assistant',
        content: refusal !== undefined ? null : (text ?? null),
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      },
      usage: reply.usage ?? DEFAULT_USAGE,
      finishReason,
      ...(refusal !== undefined ? { refusal } : {}),
      model: this.modelId,
    };
  }
}
