import type { AnswerCache } from '../../shared/store/answer-cache.js';
import type { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { NodeContext } from '../../shared/graph/node-context.js';
import type { ProviderRateLimiter } from '../../shared/operations/limits/provider-rate-limiter.js';
import { ToolRegistry } from './tools/tool-registry.js';
import type { AllowTool } from './tools/allowed-tools.js';
import type { AnyGuardrail } from './guardrails/define-guardrail.js';
import type { Embedder } from '../../shared/ports/embedder.js';
import type { Moderator } from '../../shared/ports/moderator.js';
import type { Reranker } from '../../shared/ports/reranker.js';
import type { LanguageModel } from '../../shared/ports/language-model.js';
import type { ModelListener } from './llm/model-listeners.js';
import type { ChatRequestTransformer } from './llm/chat-request-transformer.js';
import { DEFAULT_AGENT_SETTINGS, type AgentSettings } from './agent-settings.js';

export { DEFAULT_AGENT_SETTINGS, type AgentSettings } from './agent-settings.js';

/** What `callLanguageModel` needs of a rate limiter (`ProviderRateLimiter` is the Redis one). */
export type RequestRateLimiter = Pick<ProviderRateLimiter, 'acquire' | 'settle'>;

/** The services agent nodes use (`createDefaultServices(config)` builds them from the config). */
export interface AgentServices {
  /** The chat model; absent when none is configured. */
  languageModel?: LanguageModel;
  /** Tools agents may call. */
  tools?: ToolRegistry;
  /**
   * Which tools a tenant may use, asked before a tool is offered and before a call of it runs, under every
   * graph (tools/allowed-tools.ts). @default every tool for every tenant
   */
  allowTool?: AllowTool;
  agentSettings?: Partial<AgentSettings>;
  /** The embedding model (EMBED_MODEL); absent: graphs that can fall back to lexical matching do. */
  embedder?: Embedder;
  /**
   * Provider limits shared by every worker (`agentSettings.rateLimits`); absent: no limits are
   * enforced. `createDefaultServices` adds the Redis one when AGENTQ_RATE_LIMITS is set.
   */
  rateLimiter?: RequestRateLimiter;
  /**
   * Tenant token and cost budgets shared by every worker (`TenantBudget`): each fresh model call reserves
   * its estimate first (TENANT_BUDGET_EXCEEDED before the call) and counts its real spend after it.
   * `createDefaultServices` adds the Redis one; absent: no tenant budgets and no usage counted.
   */
  tenantBudget?: Pick<TenantBudget, 'reserve' | 'settle' | 'release'>;
  /** Your guardrails, offered beside the built-in ones (worker/agents/guardrails). @default [] */
  guardrails?: readonly AnyGuardrail[];
  /** The second-stage scorer of rag-agent's searches when AGENTQ_RAG_RERANKER is not `none`; absent: the built-in lexical one. */
  reranker?: Reranker;
  /** The moderation model behind the `moderation` guardrail (MODERATION_MODEL); absent: no such guardrail. */
  moderator?: Moderator;
  /** In-process listeners of every fresh model request, response and error (model-listeners.ts). @default [] */
  modelListeners?: readonly ModelListener[];
  /**
   * Rewrites every model request of every agent on this worker before it is sent (messages, tools,
   * parameters; llm/chat-request-transformer.ts). A graph's own `chatRequestTransformer` runs before it. @default none
   */
  chatRequestTransformer?: ChatRequestTransformer;
  /**
   * The tenants' answer caches, which rag-agent runs that ask for one (`answer_cache`) look their question up
   * in and store their answer in. `createDefaultServices` adds the Redis one; absent: runs answer afresh.
   */
  answerCache?: Pick<AnswerCache, 'lookup' | 'store' | 'currentVersions'>;
}

declare module '../../shared/graph/node-context.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- merges the agent ports into Services
  interface Services extends AgentServices {}
}

type WithServices = Pick<NodeContext, 'services'>;

/** The worker's language model, or a non-retryable error that says how to configure one. */
export function languageModelOf(context: WithServices): LanguageModel {
  const model = context.services.languageModel;
  if (!model) {
    throw new AgentqError(
      'PROVIDER_ERROR',
      'no language model is configured on this worker: set LLM_MODEL (plus OPENAI_BASE_URL for a server other than OpenAI, e.g. http://localhost:11434/v1 for Ollama, and OPENAI_API_KEY where it needs a key), or pass services.languageModel to startWorker',
    );
  }
  return model;
}

const emptyRegistry = new ToolRegistry();

/** The worker's tool registry (empty when it has none). */
export function toolRegistryOf(context: WithServices): ToolRegistry {
  return context.services.tools ?? emptyRegistry;
}

/** The worker's embedder, or undefined when none is configured (EMBED_MODEL unset). */
export function embedderOf(context: WithServices): Embedder | undefined {
  return context.services.embedder;
}

/** Agent limits and switches, defaults filled in. */
export function agentSettingsOf(context: WithServices): AgentSettings {
  return { ...DEFAULT_AGENT_SETTINGS, ...context.services.agentSettings };
}
