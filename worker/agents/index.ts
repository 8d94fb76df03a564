/**
 * `agentq/agents`: the built-in graphs (chain, react-agent, reflect, multi-agent, rag-agent), their input
 * schemas, and the helpers your own nodes use: model calls, structured output, embeddings, memory and
 * conversation turns, retrieval. A worker serves the built-in graphs without importing them; import them to
 * make a variant (`create…Graph`) or to build on their parts.
 */
export { chainGraph } from './graphs/chain.js';
export { createReactAgentGraph, reactAgentGraph, type ReactAgentGraphOptions } from './graphs/react-agent.js';
export type { MessageTemplates } from './graphs/react-turn.js';
export type {
  ToolHandling,
  ToolProblemHandler,
  UnknownToolProblem,
  ToolArgumentsProblem,
  ToolErrorProblem,
} from './tools/tool-handling.js';
export type { BeforeToolCall, BeforeToolCallDecision, BeforeToolCallRequest } from './tools/before-tool-call.js';
export { runToolsOf, type ToolProvider, type ToolProviderRequest } from './tools/tool-provider.js';
// The one way a graph runs a tool call (allow-list, approval, hooks, memo): your own graphs' tool steps too.
export { runToolCall, TOOL_MAX_ATTEMPTS, type RunToolCallOptions, type ToolStepResult } from './tools/run-tool-call.js';
export { toolAllowed, type AllowTool } from './tools/allowed-tools.js';
export { reactAgentInputSchema, type ReactAgentInput, type ReactAgentOutput } from './schemas/react-agent-input.js';
export {
  createReflectGraph,
  reflectGraph,
  reflectState,
  type ReflectGraphOptions,
  type ReflectJudge,
  type ReflectState,
  type ReflectWriter,
} from './graphs/reflect.js';
export {
  reflectInputSchema,
  type ReflectInput,
  type ReflectOutput,
  type ReflectVerdict,
} from './schemas/reflect-input.js';
export { createMultiAgentGraph, multiAgentGraph, type MultiAgentGraphOptions } from './graphs/multi-agent.js';
export {
  multiAgentInputSchema,
  type Expert,
  type MultiAgentInput,
  type MultiAgentOutput,
  type RecallMode,
} from './schemas/multi-agent-input.js';
export { createRagAgentGraph, ragAgentGraph, type RagAgentGraphOptions } from './rag/rag-agent.js';
export { ragInputSchema, type ParsedRagInput, type RagInput } from '../../shared/retrieval/rag-input.js';
export type { RagOutput, RagSource, RetrievalMode, RetrievedDocument } from '../../shared/retrieval/rag-output.js';
export type { RagServices } from '../../shared/retrieval/rag-services.js';
// Helpers for your own nodes: typed services, model calls, structured output, embeddings.
export {
  agentSettingsOf,
  embedderOf,
  languageModelOf,
  toolRegistryOf,
  type AgentServices,
  type AgentSettings,
  type RequestRateLimiter,
} from './agent-services.js';
export { callLanguageModel, type CallLanguageModelOptions, type ModelCall } from './llm/call-language-model.js';
export { generateObject, type GenerateObjectOptions, type GeneratedObject } from './llm/generate-object.js';
export { embedTexts, type EmbedCall, type EmbedTextsOptions } from './llm/embed-texts.js';
export {
  transformingNodes,
  type ChatRequest,
  type ChatRequestInfo,
  type ChatRequestTransformer,
} from './llm/chat-request-transformer.js';
// Memory and conversation turns in your own graphs (docs/guides/agents/memory.md).
export { memoryChannel, type MemoryState } from '../runtime/memory/memory-state.js';
export { loadPromptHistory } from '../runtime/memory/prompt-history.js';
export { messageWindow, requestWindow } from './memory/message-window.js';
export { closeTurn, openTurn, startsTurn, turnStartedChannel } from './memory/conversation-turn.js';
export { checkPromptSize, summarizeStep } from './memory/summarize-step.js';
export { shouldSummarize, summarizeHistory, type SummarizeHistoryOptions } from './memory/summarize-history.js';
// A retrieval step in your own graphs (docs/guides/agents/react-agent.md#retrieval-first).
export {
  formatPassages,
  retrievalChannel,
  retrievalNode,
  retrieve,
  sourcesOf,
  type Retrieval,
} from './retrieval-node.js';
export type { RetrieveOptions, RetrievedSource } from './schemas/retrieve-options.js';
export { searchDocuments } from '../../shared/retrieval/search-documents.js';
