/**
 * `agentq/worker`: what a process that runs graphs needs: start and stop a worker, the services its nodes
 * see (models, embedders, vector stores, rate limits), tools and guardrails to register, observers and
 * telemetry. Built-in graphs and the helpers for your own nodes are `agentq/agents`.
 */
export { startWorker, type AgentWorker, type StartWorkerOptions } from './start-worker.js';
export { createDefaultServices } from './default-services.js';
export { startTelemetry, type Telemetry } from '../shared/telemetry/telemetry.js';
export type { StepObserver, StepObservation } from '../shared/graph/step-observer.js';
// Tools and guardrails a worker registers (docs/guides/agents/tools.md, guardrails.md).
export {
  defineTool,
  type AnyTool,
  type Tool,
  type ToolDefinition,
  type ToolExecutionContext,
} from '../shared/ports/define-tool.js';
export { ToolRegistry } from './agents/tools/tool-registry.js';
export { builtInTools } from './agents/tools/built-in-tools.js';
export { createHttpFetchTool, type HttpFetchResult, type HttpFetchToolOptions } from './agents/tools/http-fetch.js';
export {
  defineGuardrail,
  type AnyGuardrail,
  type Guardrail,
  type GuardrailDefinition,
  type GuardrailResult,
  type GuardrailStage,
} from './agents/guardrails/define-guardrail.js';
export { builtInGuardrails } from './agents/guardrails/built-in-guardrails.js';
export type { GuardrailSpec, GuardrailsInput } from '../shared/contracts/guardrail-spec.js';
export type { Moderator, ModerationVerdict } from '../shared/ports/moderator.js';
// Models: the port, its OpenAI-compatible and GigaChat adapters, the provider's Batch API, listeners and shared limits.
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
  ToolExample,
} from '../shared/ports/language-model.js';
export {
  OpenAILanguageModel,
  type OpenAILanguageModelOptions,
} from '../shared/adapters/openai/openai-language-model.js';
export {
  GigaChatLanguageModel,
  type GigaChatLanguageModelOptions,
} from '../shared/adapters/gigachat/gigachat-language-model.js';
export type {
  ProviderBatch,
  ProviderBatches,
  ProviderBatchResult,
  ProviderBatchResults,
  ProviderBatchStatus,
} from '../shared/ports/provider-batches.js';
export {
  OpenAIProviderBatches,
  type OpenAIProviderBatchesOptions,
} from '../shared/adapters/openai/openai-provider-batches.js';
export type {
  ModelCallInfo,
  ModelErrorEvent,
  ModelListener,
  ModelRequestPayload,
  ModelResponseEvent,
} from './agents/llm/model-listeners.js';
export { ProviderRateLimiter } from '../shared/operations/limits/provider-rate-limiter.js';
export type { ProviderLimits } from '../shared/llm/rate-limit-table.js';
// Embeddings and vector stores (docs/guides/documents-and-search.md).
export type { Embedder, EmbedOptions, EmbedResult } from '../shared/ports/embedder.js';
export { OpenAIEmbedder, type OpenAIEmbedderOptions } from '../shared/adapters/openai/openai-embedder.js';
export {
  LocalEmbedder,
  LOCAL_EMBEDDING_MODEL,
  LOCAL_EMBEDDING_DIMENSIONS,
  type LocalEmbedderOptions,
} from '../shared/adapters/local-embedder/local-embedder.js';
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
} from '../shared/ports/vector-store.js';
export { SqliteVectorStore, type SqliteVectorStoreOptions } from '../shared/adapters/sqlite/sqlite-vector-store.js';
export { QdrantVectorStore, type QdrantVectorStoreOptions } from '../shared/adapters/qdrant/qdrant-vector-store.js';
