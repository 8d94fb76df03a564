/**
 * agentq as a library: define graphs, run workers with them, enqueue and follow runs.
 *
 * ```ts
 * import { defineGraph, channel, START, END, startWorker, AgentClient } from 'agentq';
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
export { GraphRegistry } from './shared/graph/graph-registry.js';
export type { NodeContext, Services } from './shared/graph/node-context.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './shared/graph/retry-policy.js';
export { AgentqError, ERROR_CODES, type ErrorCode, type ErrorRecord } from './shared/contracts/errors.js';
export { loadConfig, type Config } from './shared/config/config.js';
export { INTAKE_QUEUE, STEP_QUEUE } from './shared/contracts/queues.js';
export { runJobSchema, type RunJob, type RunOptions } from './shared/contracts/job-schema.js';
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
export { ON_BUSY_MODES, type OnBusy } from './shared/contracts/job-schema.js';
export { sleep } from './shared/contracts/abort.js';
export { startWorker, type AgentWorker, type StartWorkerOptions } from './worker/start-worker.js';
export { chainGraph } from './worker/agents/graphs/chain.js';
export {
  createReactAgentGraph,
  reactAgentGraph,
  type ReactAgentGraphOptions,
} from './worker/agents/graphs/react-agent.js';
export {
  defineGuardrail,
  type AnyGuardrail,
  type Guardrail,
  type GuardrailDefinition,
  type GuardrailResult,
  type GuardrailStage,
} from './worker/agents/guardrails/define-guardrail.js';
export { builtInGuardrails } from './worker/agents/guardrails/built-in-guardrails.js';
export type { GuardrailSpec, GuardrailsInput } from './shared/contracts/guardrail-spec.js';
export type {
  ToolHandling,
  ToolProblemHandler,
  UnknownToolProblem,
  ToolArgumentsProblem,
  ToolErrorProblem,
} from './worker/agents/tools/tool-handling.js';
export type {
  BeforeToolCall,
  BeforeToolCallDecision,
  BeforeToolCallRequest,
} from './worker/agents/tools/before-tool-call.js';
export type { ToolProvider, ToolProviderRequest } from './worker/agents/tools/tool-provider.js';
export type { MessageTemplates } from './worker/agents/graphs/react-turn.js';
export type {
  ModelCallInfo,
  ModelErrorEvent,
  ModelListener,
  ModelRequestPayload,
  ModelResponseEvent,
} from './worker/agents/llm/model-listeners.js';
export { buildRunResult, type RunResult, type ToolExecution } from './shared/contracts/run-result.js';
export type { ConversationRecord, ConversationTurnRecord } from './shared/store/conversations.js';
export type { Moderator, ModerationVerdict } from './shared/ports/moderator.js';
export {
  formatPassages,
  retrievalChannel,
  retrievalNode,
  retrieve,
  sourcesOf,
  type Retrieval,
} from './worker/retrieval/retrieval-node.js';
export type { RetrieveOptions, RetrievedSource } from './worker/agents/schemas/retrieve-options.js';
export {
  reactAgentInputSchema,
  type ReactAgentInput,
  type ReactAgentOutput,
} from './worker/agents/schemas/react-agent-input.js';
export type {
  AssistantMessage,
  FinishReason,
  LanguageModel,
  LanguageModelRequest,
  LanguageModelResponse,
  ResponseFormat,
  TokenUsage,
  ToolCall,
  ToolDescription,
} from './shared/ports/language-model.js';
export {
  OpenAILanguageModel,
  type OpenAILanguageModelOptions,
} from './shared/adapters/openai/openai-language-model.js';
export type {
  ProviderBatch,
  ProviderBatches,
  ProviderBatchResult,
  ProviderBatchResults,
  ProviderBatchStatus,
} from './shared/ports/provider-batches.js';
export {
  OpenAIProviderBatches,
  type OpenAIProviderBatchesOptions,
} from './shared/adapters/openai/openai-provider-batches.js';
export { ParkSignal } from './shared/graph/park-signal.js';
export {
  agentSettingsOf,
  embedderOf,
  languageModelOf,
  toolRegistryOf,
  type AgentServices,
  type AgentSettings,
  type RequestRateLimiter,
} from './worker/agents/agent-services.js';
export {
  callLanguageModel,
  type CallLanguageModelOptions,
  type ModelCall,
} from './worker/agents/llm/call-language-model.js';
export {
  defineTool,
  type AnyTool,
  type Tool,
  type ToolDefinition,
  type ToolExecutionContext,
} from './shared/ports/define-tool.js';
export { ToolRegistry } from './worker/agents/tools/tool-registry.js';
export { validateHistory } from './shared/contracts/validate-history.js';
export { createDefaultServices } from './worker/default-services.js';
export { builtInTools } from './worker/agents/tools/built-in-tools.js';
export {
  AgentClient,
  type AgentClientOptions,
  type EnqueueRequest,
  type SchedulesApi,
} from './producer/client/agent-client.js';
export { RunReader, type RunReaderOptions } from './producer/client/run-reader.js';
export {
  createApi,
  startApi,
  ApiKeys,
  type ApiInstance,
  type CreateApiOptions,
  type RunningApi,
  type StartApiOptions,
} from './producer/api/index.js';
export { BatchDispatcher } from './shared/operations/batches/batch-dispatcher.js';
export {
  batchRequestSchema,
  type BatchRecord,
  type BatchRequest,
  type BatchResult,
  type ProviderBatchProgress,
} from './shared/operations/batches/batch-schema.js';
export { scheduleSpecSchema, type ScheduleSpec } from './shared/operations/schedules/schedule-schema.js';
export type { ScheduledRun, ScheduleRecord } from './shared/operations/schedules/schedules.js';
export type { StepObserver, StepObservation } from './shared/graph/step-observer.js';
export { startTelemetry, type Telemetry } from './shared/telemetry/telemetry.js';
// More agents: reflection, multi-agent, memory and conversations, structured output, provider limits, http_fetch.
export {
  createReflectGraph,
  reflectGraph,
  reflectState,
  type ReflectGraphOptions,
  type ReflectJudge,
  type ReflectState,
  type ReflectWriter,
} from './worker/agents/graphs/reflect.js';
export {
  reflectInputSchema,
  type ReflectInput,
  type ReflectOutput,
  type ReflectVerdict,
} from './worker/agents/schemas/reflect-input.js';
export {
  createMultiAgentGraph,
  multiAgentGraph,
  type MultiAgentGraphOptions,
} from './worker/agents/graphs/multi-agent.js';
export {
  multiAgentInputSchema,
  type Expert,
  type MultiAgentInput,
  type MultiAgentOutput,
  type RecallMode,
} from './worker/agents/schemas/multi-agent-input.js';
export type { Embedder, EmbedOptions, EmbedResult } from './shared/ports/embedder.js';
export { OpenAIEmbedder, type OpenAIEmbedderOptions } from './shared/adapters/openai/openai-embedder.js';
export {
  LocalEmbedder,
  LOCAL_EMBEDDING_MODEL,
  LOCAL_EMBEDDING_DIMENSIONS,
  type LocalEmbedderOptions,
} from './shared/adapters/local-embedder/local-embedder.js';
export { embedTexts, type EmbedCall, type EmbedTextsOptions } from './worker/agents/llm/embed-texts.js';
export {
  generateObject,
  type GenerateObjectOptions,
  type GeneratedObject,
} from './worker/agents/llm/generate-object.js';
export { ProviderRateLimiter, type ProviderLimits } from './shared/operations/limits/provider-rate-limiter.js';
export { memoryChannel, type MemoryState } from './worker/agents/memory/memory-state.js';
export { loadPromptHistory, promptView } from './worker/agents/memory/prompt-history.js';
export { messageWindow, requestWindow } from './worker/agents/memory/message-window.js';
export { closeTurn, openTurn, startsTurn, turnStartedChannel } from './worker/agents/memory/conversation-turn.js';
export { checkPromptSize, summarizeStep } from './worker/agents/memory/summarize-step.js';
export {
  shouldSummarize,
  summarizeHistory,
  type SummarizeHistoryOptions,
} from './worker/agents/memory/summarize-history.js';
export {
  createHttpFetchTool,
  type HttpFetchResult,
  type HttpFetchToolOptions,
} from './worker/agents/tools/http-fetch.js';
// Document ingestion and search (docs/guides/documents-and-search.md).
export type {
  CollectionInfo,
  DeleteSelector,
  Payload,
  PayloadFilter,
  PayloadMatch,
  PayloadScalar,
  PayloadValue,
  PendingVector,
  VectorHit,
  VectorQuery,
  VectorRecord,
  VectorStore,
  VectorUpdate,
} from './shared/ports/vector-store.js';
export { SqliteVectorStore, type SqliteVectorStoreOptions } from './shared/adapters/sqlite/sqlite-vector-store.js';
export { QdrantVectorStore, type QdrantVectorStoreOptions } from './shared/adapters/qdrant/qdrant-vector-store.js';
export { reciprocalRankFusion } from './shared/retrieval/reciprocal-rank-fusion.js';
export {
  IngestClient,
  type IngestBatch,
  type IngestClientOptions,
  type IngestOptions,
  type IngestSource,
} from './producer/client/ingest-client.js';
export { searchDocuments, type SearchHit, type SearchRequest } from './shared/retrieval/search-documents.js';
export type { DocumentRecord, DocumentStatus, DocumentType } from './shared/retrieval/document-record.js';
export type { IngestItemResult, IngestOutcome, IngestProgress } from './shared/retrieval/ingest-batch.js';
export type { CollectionStatus } from './shared/retrieval/collection-status.js';
export { INGEST_QUEUE } from './shared/contracts/queues.js';
// Agentic RAG with citations (docs/guides/batch-qa.md).
export { createRagAgentGraph, ragAgentGraph, type RagAgentGraphOptions } from './worker/retrieval/rag/rag-agent.js';
export { ragInputSchema, type ParsedRagInput, type RagInput } from './shared/retrieval/rag-input.js';
export type { RagOutput, RagSource, RetrievalMode, RetrievedDocument } from './shared/retrieval/rag-output.js';
export type { RagServices } from './shared/retrieval/rag-services.js';
