/**
 * `agentq`: the graph model, the client and the contracts a producer needs. It loads no worker, web server
 * or vendor SDK beyond the client's Redis and BullMQ (a test asserts what it loads). The other doors:
 * `agentq/worker` (worker/index.ts), `agentq/agents` (worker/agents/index.ts), `agentq/api`
 * (producer/api/index.ts); docs/reference/library-api.md lists each door's names.
 *
 * ```ts
 * import { defineGraph, channel, START, END, AgentClient } from 'agentq';
 * import { startWorker } from 'agentq/worker';
 * ```
 */
export { defineGraph, GraphBuilder, type GraphDefinition } from './shared/graph/define-graph.js';
export { channel, type Channel, type Channels, type StateOf, type UpdateOf } from './shared/graph/channels.js';
export {
  START,
  END,
  Send,
  type AnyGraph,
  type Graph,
  type NodeFunction,
  type NodeOptions,
  type NodeResult,
  type Router,
  type Task,
} from './shared/graph/graph.js';
export type { NodeContext, Services } from './shared/graph/node-context.js';
export type { InterruptOptions, WaitEvent, WaitForOptions, WaitOutcome } from './shared/contracts/wait-event.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './shared/graph/retry-policy.js';
export { sleep } from './shared/contracts/abort.js';
export { AgentqError, ERROR_CODES, type ErrorCode, type ErrorRecord } from './shared/contracts/errors.js';
export { loadConfig, type Config } from './shared/config/config.js';
export {
  runJobSchema,
  ON_BUSY_MODES,
  type OnBusy,
  type RunJob,
  type RunOptions,
} from './shared/contracts/job-schema.js';
export {
  contentText,
  type ContentPart,
  type Message,
  type RunEvent,
  type RunRecord,
  type RunStatus,
  type StepRecord,
  type TextMessage,
} from './shared/contracts/run-record.js';
export type { RunResult, ToolExecution } from './shared/contracts/run-result.js';
export type { ConversationRecord, ConversationTurnRecord } from './shared/store/conversations.js';
export {
  AgentClient,
  type AgentClientOptions,
  type CancelRunsFilter,
  type CancelRunsOptions,
  type CancelRunsSummary,
  type EnqueueRequest,
  type SchedulesApi,
  type SendEventRequest,
  type SendEventResult,
} from './producer/client/agent-client.js';
export { RunReader, type RunReaderOptions } from './producer/client/run-reader.js';
export {
  batchRequestSchema,
  type BatchRecord,
  type BatchRequest,
  type BatchResult,
  type ProviderBatchProgress,
} from './shared/operations/batches/batch-schema.js';
export { scheduleSpecSchema, type ScheduleSpec } from './shared/operations/schedules/schedule-schema.js';
export type { ScheduledRun, ScheduleRecord } from './shared/operations/schedules/schedules.js';
// Documents: ingest and search from a producer (docs/guides/documents-and-search.md).
export {
  IngestClient,
  type IngestBatch,
  type IngestClientOptions,
  type IngestOptions,
  type IngestSource,
} from './producer/client/ingest-client.js';
export type { SearchHit, SearchRequest } from './shared/retrieval/search-documents.js';
export type { DocumentRecord, DocumentStatus, DocumentType } from './shared/retrieval/document-record.js';
export type { IngestItemResult, IngestOutcome, IngestProgress } from './shared/retrieval/ingest-batch.js';
export type { CollectionStatus } from './shared/retrieval/collection-status.js';
