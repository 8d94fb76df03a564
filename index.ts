/**
 * agentq as a library: define graphs, run workers with them, enqueue and follow runs.
 *
 * ```ts
 * import { defineGraph, channel, START, END, startWorker, AgentClient } from 'agentq';
 * ```
 */
export { defineGraph, GraphBuilder, type GraphDefinition } from './shared/graph/define-graph.js';
export { channel, type Channel, type Channels, type StateOf, type UpdateOf } from './shared/graph/channels.js';
export { START, END, Send, type AnyGraph, type Graph, type NodeFunction, type NodeOptions, type NodeResult, type Router, type Task } from './shared/graph/graph.js';
export { GraphRegistry } from './shared/graph/graph-registry.js';
export type { NodeContext, Services } from './shared/graph/node-context.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './shared/graph/retry-policy.js';
export { AgentqError, ERROR_CODES, type ErrorCode, type ErrorRecord } from './shared/errors.js';
export { loadConfig, type Config } from './shared/config.js';
export { INTAKE_QUEUE, STEP_QUEUE } from './shared/queues.js';
export { runJobSchema, type RunJob, type RunOptions } from './shared/job-schema.js';
export type { Message, RunEvent, RunRecord, RunStatus, StepRecord } from './shared/run-record.js';
export { sleep } from './shared/abort.js';
export { startWorker, type AgentWorker, type StartWorkerOptions } from './worker/start-worker.js';
export { chainGraph } from './worker/graphs/chain.js';
export { createReactAgentGraph, reactAgentGraph, type ReactAgentGraphOptions } from './worker/graphs/react-agent.js';
export { defineGuardrail, type AnyGuardrail, type Guardrail, type GuardrailDefinition, type GuardrailResult, type GuardrailStage } from './shared/guardrails/define-guardrail.js';
export { builtInGuardrails } from './shared/guardrails/built-in-guardrails.js';
export type { GuardrailSpec, GuardrailsInput } from './shared/guardrails/guardrail-spec.js';
export type { ToolHandling, ToolProblemHandler, UnknownToolProblem, ToolArgumentsProblem, ToolErrorProblem } from './shared/tools/tool-handling.js';
export type { Moderator, ModerationVerdict } from './shared/ports/moderator.js';
export { formatPassages, retrievalChannel, retrievalNode, retrieve, sourcesOf, type Retrieval } from './worker/retrieval/retrieval-node.js';
export type { RetrieveOptions, RetrievedSource } from './shared/schemas/retrieve-options.js';
export { reactAgentInputSchema, type ReactAgentInput, type ReactAgentOutput } from './shared/schemas/react-agent-input.js';
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
export { OpenAILanguageModel, type OpenAILanguageModelOptions } from './worker/adapters/openai-language-model.js';
export {
  agentSettingsOf,
  embedderOf,
  languageModelOf,
  toolRegistryOf,
  type AgentServices,
  type AgentSettings,
  type RequestRateLimiter,
} from './shared/ports/agent-services.js';
export { callLanguageModel, type CallLanguageModelOptions, type ModelCall } from './shared/llm/call-language-model.js';
export { defineTool, type AnyTool, type Tool, type ToolDefinition, type ToolExecutionContext } from './shared/tools/define-tool.js';
export { ToolRegistry } from './shared/tools/tool-registry.js';
export { validateHistory } from './shared/history/validate-history.js';
export { createDefaultServices } from './worker/default-services.js';
export { builtInTools } from './worker/tools/built-in-tools.js';
export { AgentClient, type AgentClientOptions, type EnqueueRequest, type SchedulesApi } from './producer/agent-client.js';
export { RunReader, type RunReaderOptions } from './producer/run-reader.js';
export { createApi, startApi, ApiKeys, type ApiInstance, type CreateApiOptions, type RunningApi, type StartApiOptions } from './producer/api/index.js';
export { BatchDispatcher } from './shared/batches/batch-dispatcher.js';
export { batchRequestSchema, type BatchRecord, type BatchRequest, type BatchResult } from './shared/batches/batch-schema.js';
export { scheduleSpecSchema, type ScheduleSpec } from './shared/schedules/schedule-schema.js';
export type { ScheduledRun, ScheduleRecord } from './shared/schedules/schedules.js';
export type { StepObserver, StepObservation } from './shared/graph/step-observer.js';
export { startTelemetry, type Telemetry } from './shared/telemetry/telemetry.js';
// More agents: reflection, multi-agent, memory and conversations, structured output, provider limits, http_fetch.
export { reflectGraph } from './worker/graphs/reflect.js';
export { reflectInputSchema, type ReflectInput, type ReflectOutput, type ReflectVerdict } from './shared/schemas/reflect-input.js';
export { multiAgentGraph } from './worker/graphs/multi-agent.js';
export { multiAgentInputSchema, type Expert, type MultiAgentInput, type MultiAgentOutput } from './shared/schemas/multi-agent-input.js';
export type { Embedder, EmbedOptions, EmbedResult } from './shared/ports/embedder.js';
export { OpenAIEmbedder, type OpenAIEmbedderOptions } from './worker/adapters/openai-embedder.js';
export { LocalEmbedder, LOCAL_EMBEDDING_MODEL, LOCAL_EMBEDDING_DIMENSIONS, type LocalEmbedderOptions } from './worker/adapters/local-embedder.js';
export { embedTexts, type EmbedCall, type EmbedTextsOptions } from './shared/llm/embed-texts.js';
export { generateObject, type GenerateObjectOptions, type GeneratedObject } from './shared/llm/generate-object.js';
export { ProviderRateLimiter, type ProviderLimits } from './shared/limits/provider-rate-limiter.js';
export { memoryChannel, type MemoryState } from './shared/memory/memory-state.js';
export { loadPromptHistory, promptView } from './shared/memory/prompt-history.js';
export { messageWindow } from './shared/memory/message-window.js';
export { checkPromptSize, summarizeStep } from './shared/memory/summarize-step.js';
export { shouldSummarize, summarizeHistory, type SummarizeHistoryOptions } from './shared/memory/summarize-history.js';
export { createHttpFetchTool, type HttpFetchResult, type HttpFetchToolOptions } from './worker/tools/http-fetch.js';
// Document ingestion and search (README: Documents).
export type { CollectionInfo, DeleteSelector, Payload, PayloadFilter, PayloadMatch, PayloadScalar, PayloadValue, VectorHit, VectorQuery, VectorRecord, VectorStore } from './shared/ports/vector-store.js';
export { SqliteVectorStore, type SqliteVectorStoreOptions } from './worker/adapters/sqlite-vector-store.js';
export { QdrantVectorStore, type QdrantVectorStoreOptions } from './worker/adapters/qdrant-vector-store.js';
export { reciprocalRankFusion } from './shared/retrieval/reciprocal-rank-fusion.js';
export { IngestClient, type IngestBatch, type IngestClientOptions, type IngestOptions, type IngestSource } from './producer/ingest/ingest-client.js';
export { searchDocuments, type SearchHit, type SearchRequest } from './shared/ingest/search-documents.js';
export type { DocumentRecord, DocumentStatus, DocumentType } from './shared/ingest/document-record.js';
export type { IngestItemResult, IngestOutcome, IngestProgress } from './shared/ingest/ingest-batch.js';
export { INGEST_QUEUE } from './shared/queues.js';
// Agentic RAG with citations (README: Batch document Q&A).
export { ragAgentGraph } from './worker/graphs/rag-agent.js';
export { ragInputSchema, type ParsedRagInput, type RagInput } from './shared/schemas/rag-input.js';
export type { RagOutput, RagSource, RetrievalMode, RetrievedDocument } from './shared/rag/rag-output.js';
export type { RagServices } from './shared/rag/rag-services.js';
