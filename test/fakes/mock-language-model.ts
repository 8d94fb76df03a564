import type { LanguageModel, LanguageModelRequest, LanguageModelResponse } from '../../shared/ports/language-model.js';

/** One scripted result: a response, a shorthand (text answer), or an error to throw. */
export type MockResult = LanguageModelResponse | string | Error;

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
    if (typeof result === 'string') {
      return {
        message: { role: 'assistant', content: result },
        usage: { inputTokens: 10, outputTokens: 5 },
        finishReason: 'stop',
        model: this.modelId,
      };
    }
    return result;
  }
}
