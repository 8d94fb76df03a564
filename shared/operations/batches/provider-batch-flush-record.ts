/**
 * One flush: the intent of one provider batch and where its life stands, as its hash holds it
 * (Keys.providerBatch(batch).flush(id)). Its state only moves forward, each move written after the
 * provider call it records, so any worker can resume it after a kill -9 (ProviderBatchFlush):
 *   intent → uploaded → created → finished → marked → done
 */
type FlushState = 'intent' | 'uploaded' | 'created' | 'finished' | 'marked' | 'done';

export interface FlushUsage {
  inputTokens: number;
  outputTokens: number;
  /** At batch prices (AGENTQ_BATCH_PRICES, else half of AGENTQ_PRICES). */
  costUsd: number;
  /** What the same tokens cost at live prices (AGENTQ_PRICES). */
  liveCostUsd: number;
  /** Requests answered (saved in their steps' memos). */
  answered: number;
  /** Requests answered with an error. */
  errors: number;
}

export interface FlushRecord {
  id: string;
  state: FlushState;
  model: string;
  /** The custom ids of its requests. */
  ids: string[];
  requests: number;
  bytes: number;
  createdAt: number;
  updatedAt: number;
  /** Uploads begun (a second one looks for the first's file before uploading again). */
  uploads: number;
  fileId?: string;
  /** The provider's batch id, once created (or found again). */
  batchId?: string;
  /** The provider's status, as last read. */
  status?: string;
  counts?: { total: number; completed: number; failed: number };
  outputFileId?: string;
  errorFileId?: string;
  /** Why the provider failed the whole batch, or why agentq gave up on it. */
  errors?: string[];
  nextPollAt: number;
  pollDelayMs: number;
  /** Failed downloads of its results (or refused polls) in a row so far. */
  downloads: number;
  /** When the first of those failed (ms); unset once a poll answers. */
  failingSince?: number;
  cancelRequested: boolean;
  usage?: FlushUsage;
  /** Lines of its results files that were not a result of this flush (malformed, unknown custom_id). */
  problems?: string[];
  finishedAt?: number;
}

export function parseFlushRecord(fields: Record<string, string>): FlushRecord | undefined {
  if (!fields['id'] || !fields['state']) return undefined;
  const json = <T>(name: string): T | undefined => (fields[name] ? (JSON.parse(fields[name]) as T) : undefined);
  const number = (name: string, fallback = 0) => (fields[name] === undefined ? fallback : Number(fields[name]));
  const record: FlushRecord = {
    id: fields['id'],
    state: fields['state'] as FlushState,
    model: fields['model'] ?? '',
    ids: json<string[]>('ids') ?? [],
    requests: number('requests'),
    bytes: number('bytes'),
    createdAt: number('createdAt'),
    updatedAt: number('updatedAt'),
    uploads: number('uploads'),
    nextPollAt: number('nextPollAt'),
    pollDelayMs: number('pollDelayMs'),
    downloads: number('downloads'),
    cancelRequested: fields['cancelRequested'] === '1',
  };
  const optional = {
    fileId: fields['fileId'],
    batchId: fields['batchId'],
    status: fields['status'],
    counts: json<FlushRecord['counts']>('counts'),
    outputFileId: fields['outputFileId'],
    errorFileId: fields['errorFileId'],
    errors: json<string[]>('errors'),
    usage: json<FlushUsage>('usage'),
    problems: json<string[]>('problems'),
    finishedAt: fields['finishedAt'] === undefined ? undefined : Number(fields['finishedAt']),
    failingSince: fields['failingSince'] === undefined ? undefined : Number(fields['failingSince']),
  };
  for (const [name, value] of Object.entries(optional))
    if (value !== undefined) Object.assign(record, { [name]: value });
  return record;
}
