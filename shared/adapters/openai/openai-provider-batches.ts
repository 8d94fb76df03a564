import { APIError, toFile, type OpenAI } from 'openai';
import type { Batch } from 'openai/resources/batches';
import type { ChatCompletion } from 'openai/resources/chat/completions';
import { AgentqError } from '../../contracts/errors.js';
import type { LanguageModelRequest } from '../../ports/language-model.js';
import type {
  ProviderBatch,
  ProviderBatchResult,
  ProviderBatchResults,
  ProviderBatches,
} from '../../ports/provider-batches.js';
import { chatRequestBody, chatResponseOf } from './chat-completion-codec.js';
import { createOpenAIClient } from './create-openai-client.js';
import { mapOpenAIError } from './openai-error.js';
import { OPENAI_DEFAULT_BASE_URL } from './openai-language-model.js';

export interface OpenAIProviderBatchesOptions {
  /** The chat model a request that names none is sent to (LLM_MODEL). */
  model: string;
  /** @default 'https://api.openai.com/v1' */
  baseURL?: string;
  /** @default none */
  apiKey?: string;
  /** Per HTTP request of the Batch API (not the batch's completion window). @default 60000 */
  timeoutMs?: number;
  /** As the live model sends it (OpenAILanguageModelOptions.maxTokensParameter). @default 'max_tokens' */
  maxTokensParameter?: 'max_tokens' | 'max_completion_tokens';
  /** As the live model sends them (OpenAILanguageModelOptions.toolExamples). @default 'omit' */
  toolExamples?: 'omit' | 'description';
  /** `completion_window` of each batch: OpenAI accepts `24h`. @default '24h' */
  completionWindow?: '24h';
  /** @default 'openai' */
  provider?: string;
  /** Your own SDK client; its retries are ignored. */
  client?: OpenAI;
}

const ENDPOINT = '/v1/chat/completions';
/** How many pages of the batch list findBatch reads at most (100 batches a page, newest first). */
const FIND_PAGES = 20;

/**
 * The `ProviderBatches` port over the openai SDK: `files.create` (with `toFile`), `batches.create`,
 * `retrieve`, `list`, `cancel` and `files.content`. The SDK's retries are off; failures become
 * `AgentqError`s as live calls' do (5xx, timeouts and connection errors retryable).
 */
export class OpenAIProviderBatches implements ProviderBatches {
  readonly provider: string;
  readonly endpoint = ENDPOINT;
  private readonly client: OpenAI;
  private readonly baseURL: string;
  private readonly modelId: string;
  private readonly timeoutMs: number;
  private readonly maxTokensParameter: 'max_tokens' | 'max_completion_tokens';
  private readonly toolExamples: 'omit' | 'description';
  private readonly completionWindow: '24h';

  constructor({
    model,
    baseURL = OPENAI_DEFAULT_BASE_URL,
    apiKey,
    timeoutMs = 60_000,
    maxTokensParameter = 'max_tokens',
    toolExamples = 'omit',
    completionWindow = '24h',
    provider = 'openai',
    client,
  }: OpenAIProviderBatchesOptions) {
    this.modelId = model;
    this.provider = provider;
    this.baseURL = client?.baseURL ?? baseURL;
    this.timeoutMs = timeoutMs;
    this.maxTokensParameter = maxTokensParameter;
    this.toolExamples = toolExamples;
    this.completionWindow = completionWindow;
    this.client = client ?? createOpenAIClient({ baseURL, apiKey, timeoutMs });
  }

  requestBody(request: Omit<LanguageModelRequest, 'abortSignal'>): Record<string, unknown> {
    return chatRequestBody(request, {
      model: this.modelId,
      maxTokensParameter: this.maxTokensParameter,
      toolExamples: this.toolExamples,
    }) as never;
  }

  async supported(): Promise<boolean> {
    try {
      await this.client.batches.list({ limit: 1 }, this.options());
      return true;
    } catch (error) {
      if (error instanceof APIError && (error.status === 404 || error.status === 405)) return false;
      throw this.mapped(error, 'list batches');
    }
  }

  async upload(filename: string, content: string): Promise<string> {
    try {
      const file = await this.client.files.create(
        { file: await toFile(Buffer.from(content, 'utf8'), filename, { type: 'application/jsonl' }), purpose: 'batch' },
        this.options(),
      );
      return file.id;
    } catch (error) {
      throw this.mapped(error, `upload the batch file ${filename}`);
    }
  }

  async findUpload(filename: string): Promise<string | undefined> {
    try {
      for await (const file of this.client.files.list({ purpose: 'batch', limit: 100 }, this.options())) {
        if (file.filename === filename) return file.id;
      }
      return undefined;
    } catch (error) {
      // A provider that cannot list files: upload again (an unused file costs storage, not a paid call).
      if (error instanceof APIError && (error.status === 404 || error.status === 405)) return undefined;
      throw this.mapped(error, 'list files');
    }
  }

  async create(fileId: string, metadata: Record<string, string>): Promise<ProviderBatch> {
    try {
      return toBatch(
        await this.client.batches.create(
          { input_file_id: fileId, endpoint: ENDPOINT, completion_window: this.completionWindow, metadata },
          this.options(),
        ),
      );
    } catch (error) {
      throw this.mapped(error, `create a batch of file ${fileId}`);
    }
  }

  async findBatch(key: string, value: string, sinceSeconds: number): Promise<ProviderBatch | undefined> {
    try {
      let pages = 0;
      let page = await this.client.batches.list({ limit: 100 }, this.options());
      for (;;) {
        for (const batch of page.data) {
          if (batch.metadata?.[key] === value) return toBatch(batch);
          // Newest first: past the intent's time, nothing older can be it.
          if (batch.created_at < sinceSeconds) return undefined;
        }
        pages += 1;
        if (!page.hasNextPage() || pages >= FIND_PAGES) return undefined;
        page = await page.getNextPage();
      }
    } catch (error) {
      throw this.mapped(error, 'list batches');
    }
  }

  async retrieve(batchId: string): Promise<ProviderBatch> {
    try {
      return toBatch(await this.client.batches.retrieve(batchId, this.options()));
    } catch (error) {
      throw this.mapped(error, `read batch ${batchId}`);
    }
  }

  async cancel(batchId: string): Promise<ProviderBatch> {
    try {
      return toBatch(await this.client.batches.cancel(batchId, this.options()));
    } catch (error) {
      throw this.mapped(error, `cancel batch ${batchId}`);
    }
  }

  async download(fileId: string): Promise<ProviderBatchResults> {
    let text: string;
    try {
      // The SDK asks for `application/binary`, which the published contract does not list for this
      // route (a server holding to it answers 406); the contract's own is `application/json`.
      const response = await this.client.files.content(fileId, {
        ...this.options(),
        headers: { Accept: 'application/json' },
      });
      text = await response.text();
    } catch (error) {
      throw this.mapped(error, `download file ${fileId}`);
    }
    const results: ProviderBatchResult[] = [];
    const problems: ProviderBatchResults['problems'] = [];
    for (const [index, line] of text.split('\n').entries()) {
      if (line.trim() === '') continue;
      const parsed = this.resultOf(line);
      if (typeof parsed === 'string') problems.push({ line: index + 1, problem: parsed });
      else results.push(parsed);
    }
    return { results, problems };
  }

  /** One line of a results or errors file, or what is wrong with it. */
  private resultOf(line: string): ProviderBatchResult | string {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return `not JSON: ${line.slice(0, 80)}`;
    }
    const record = value as {
      custom_id?: unknown;
      response?: { status_code?: number; body?: unknown } | null;
      error?: { code?: string; message?: string } | null;
    };
    if (typeof record?.custom_id !== 'string' || record.custom_id === '') return 'no custom_id';
    const customId = record.custom_id;
    if (record.error) {
      return {
        customId,
        error: {
          ...(record.error.code ? { code: record.error.code } : {}),
          message: record.error.message ?? 'no message',
        },
      };
    }
    const status = record.response?.status_code;
    const body = record.response?.body as { error?: { code?: string; message?: string } } | undefined;
    if (status !== 200) {
      return {
        customId,
        error: {
          ...(status === undefined ? {} : { status }),
          ...(body?.error?.code ? { code: body.error.code } : {}),
          message: body?.error?.message ?? `HTTP ${status ?? 'unknown'} without a message`,
        },
      };
    }
    try {
      return { customId, response: chatResponseOf(body as unknown as ChatCompletion, this.where()) };
    } catch (error) {
      return { customId, error: { status: 200, message: (error as Error).message } };
    }
  }

  private where() {
    return { baseURL: this.baseURL, modelId: this.modelId };
  }

  private options() {
    return { maxRetries: 0, timeout: this.timeoutMs };
  }

  /** An SDK failure as an AgentqError that says which Batch API step failed. */
  private mapped(error: unknown, what: string): unknown {
    const mapped = mapOpenAIError(error, {
      baseURL: this.baseURL,
      model: this.modelId,
      timeoutMs: this.timeoutMs,
      abortSignal: undefined,
      maxRetryAfterMs: 600_000,
    });
    if (!AgentqError.isInstance(mapped)) return mapped;
    return new AgentqError(mapped.code, `Batch API (${what}): ${mapped.message}`, {
      retryable: mapped.retryable,
      details: mapped.details,
      cause: error,
      ...(mapped.retryAfterMs === undefined ? {} : { retryAfterMs: mapped.retryAfterMs }),
    });
  }
}

function toBatch(batch: Batch): ProviderBatch {
  const errors = batch.errors?.data?.map((entry) =>
    [entry.code, entry.line ? `line ${entry.line}` : '', entry.message].filter(Boolean).join(': '),
  );
  return {
    id: batch.id,
    status: batch.status,
    requestCounts: batch.request_counts ?? { total: 0, completed: 0, failed: 0 },
    ...(batch.output_file_id ? { outputFileId: batch.output_file_id } : {}),
    ...(batch.error_file_id ? { errorFileId: batch.error_file_id } : {}),
    ...(errors && errors.length > 0 ? { errors } : {}),
    metadata: (batch.metadata ?? {}) as Record<string, string>,
    createdAt: batch.created_at,
  };
}
