import type { LanguageModelRequest, LanguageModelResponse } from './language-model.js';

/** A provider batch's status, as OpenAI's Batch API names them. */
export type ProviderBatchStatus =
  'validating' | 'failed' | 'in_progress' | 'finalizing' | 'completed' | 'expired' | 'cancelling' | 'cancelled';

/** The statuses after which a provider batch changes no more. */
export const FINISHED_PROVIDER_BATCH_STATUSES: ReadonlySet<ProviderBatchStatus> = new Set([
  'failed',
  'completed',
  'expired',
  'cancelled',
]);

/** A provider batch as the provider reports it. */
export interface ProviderBatch {
  id: string;
  status: ProviderBatchStatus;
  /** Requests in it, done and failed so far. */
  requestCounts: { total: number; completed: number; failed: number };
  /** The results file (one line per request answered), once there is one. */
  outputFileId?: string;
  /** The errors file (one line per request not answered: expired, cancelled, invalid), once there is one. */
  errorFileId?: string;
  /** Why the whole batch failed (validation of its input file), when it did. */
  errors?: string[];
  /** What it was created with (agentq names its flush here, to find it again after a crash). */
  metadata: Record<string, string>;
  /** Seconds since the epoch, as the provider sends it. */
  createdAt: number;
}

/** One line of a results or errors file: a request's answer (`response`) or why it has none (`error`). */
export interface ProviderBatchResult {
  customId: string;
  /** The answer, when the request got one (HTTP 200). */
  response?: LanguageModelResponse;
  /** Why not: the provider's status, code and message (a 4xx/5xx body, an expired or cancelled request). */
  error?: { status?: number; code?: string; message: string };
}

/** A results file read line by line: the lines it could read, and why it could not read the others. */
export interface ProviderBatchResults {
  results: ProviderBatchResult[];
  /** Lines that were not a result (malformed JSON, no custom_id): their 1-based number and the problem. */
  problems: { line: number; problem: string }[];
}

/**
 * The provider's Batch API (OpenAI's `/v1/files` + `/v1/batches`, or a compatible server): chat requests
 * uploaded as a JSON Lines file, answered within a completion window at batch prices. Vendor SDKs stay
 * behind this port (docs/architecture.md); the collector in worker/provider-batches drives it. Every method maps the
 * provider's failures onto `AgentqError` (retryable for 5xx, timeouts and connection errors), as the
 * `LanguageModel` port does.
 */
export interface ProviderBatches {
  /** The provider, as spans name it (`gen_ai.provider.name`). */
  readonly provider: string;
  /** The body of one request in the file: exactly what a live, non-streamed call of `request` sends. */
  requestBody(request: Omit<LanguageModelRequest, 'abortSignal'>): Record<string, unknown>;
  /** The endpoint a request line names (`url` of the line), e.g. `/v1/chat/completions`. */
  readonly endpoint: string;
  /**
   * Whether the provider has the Batch API at all: false on a 404 of its batches route (Ollama, most
   * local servers). Other failures throw.
   */
  supported(): Promise<boolean>;
  /** Uploads a JSON Lines file with purpose `batch`; → its file id. */
  upload(filename: string, content: string): Promise<string>;
  /** A file uploaded before under `filename` (a worker killed after the upload), if the provider lists files. */
  findUpload(filename: string): Promise<string | undefined>;
  /** Creates a batch of the uploaded file, with `metadata` to find it by (findBatch). */
  create(fileId: string, metadata: Record<string, string>): Promise<ProviderBatch>;
  /** The newest batch whose metadata has `key` = `value`, among those created since `sinceSeconds`. */
  findBatch(key: string, value: string, sinceSeconds: number): Promise<ProviderBatch | undefined>;
  retrieve(batchId: string): Promise<ProviderBatch>;
  cancel(batchId: string): Promise<ProviderBatch>;
  /** A results or errors file, parsed line by line (a bad line is a problem, not a failure of the rest). */
  download(fileId: string): Promise<ProviderBatchResults>;
}
