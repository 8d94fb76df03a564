import { connectRedis, type RedisConnection } from '../shared/redis/connect-redis.js';
import type { Config } from '../shared/config/config.js';
import { Keys } from '../shared/store/keys.js';
import { ProviderRateLimiter } from '../shared/operations/limits/provider-rate-limiter.js';
import { AnswerCache } from '../shared/store/answer-cache.js';
import { TenantBudget } from '../shared/operations/limits/tenant-budget.js';
import { RedisMetrics } from '../shared/operations/metrics/redis-metrics.js';
import type { AgentServices, RequestRateLimiter } from './agents/agent-services.js';
import type { AnyTool } from '../shared/ports/define-tool.js';
import { ToolRegistry } from './agents/tools/tool-registry.js';
import { createEmbedder, endpointOf } from '../shared/adapters/create-embedder.js';
import { OpenAILanguageModel } from '../shared/adapters/openai/openai-language-model.js';
import { GigaChatLanguageModel } from '../shared/adapters/gigachat/gigachat-language-model.js';
import type { LanguageModel } from '../shared/ports/language-model.js';
import { OpenAIModerator } from '../shared/adapters/openai/openai-moderator.js';
import { agentSettingsFrom } from './agents/agent-settings.js';
import { builtInTools } from './agents/tools/built-in-tools.js';
import { createHttpFetchTool } from './agents/tools/http-fetch.js';
import { TenantPolicy, toolAllowed } from '../shared/config/tenant-policy.js';

interface DefaultServicesOptions {
  /** Tools registered beside the built-in ones (`calculator`, `current_time`, `http_fetch` when enabled). @default [] */
  tools?: readonly AnyTool[];
  /**
   * The Redis connection the provider limits (AGENTQ_RATE_LIMITS) are counted on — pass the worker's
   * own. @default a connection of its own, opened on the first limited request
   */
  redis?: RedisConnection;
}

/**
 * The services a worker hands its nodes unless told otherwise: the language model when LLM_MODEL is
 * set (on OPENAI_BASE_URL / OPENAI_API_KEY, or GigaChat with LLM_PROVIDER=gigachat), the embedder EMBED_PROVIDER names (see createEmbedder), the tool
 * registry with the built-in tools (plus `http_fetch` when AGENTQ_HTTP_FETCH_ALLOW_HOSTS lists hosts)
 * and yours, the provider limiter when AGENTQ_RATE_LIMITS is set, the agent limits from the config, and
 * the tool rules of AGENTQ_TENANT_POLICY_FILE (every tool for every tenant without one).
 */
export function createDefaultServices(
  config: Config,
  { tools = [], redis }: DefaultServicesOptions = {},
): Required<Pick<AgentServices, 'tools' | 'agentSettings'>> & AgentServices {
  const endpoint = endpointOf(config);
  const embedder = createEmbedder(config, endpoint);
  const httpFetch =
    config.httpFetchAllowHosts.length > 0
      ? [
          createHttpFetchTool({
            allowHosts: config.httpFetchAllowHosts,
            maxBytes: config.httpFetchMaxBytes,
            timeoutMs: config.httpFetchTimeoutMs,
          }),
        ]
      : [];
  return {
    ...(config.llmModel ? { languageModel: languageModelOf(config, config.llmModel, endpoint) } : {}),
    ...(embedder ? { embedder } : {}),
    ...(config.moderationModel
      ? { moderator: new OpenAIModerator({ model: config.moderationModel, ...endpoint }) }
      : {}),
    ...(Object.keys(config.rateLimits).length > 0 ? { rateLimiter: lazyRateLimiter(config, redis) } : {}),
    tenantBudget: lazyTenantBudget(config, redis),
    answerCache: lazyAnswerCache(config, redis),
    tools: new ToolRegistry([...builtInTools(), ...httpFetch, ...tools]),
    ...(config.tenantPolicy ? { allowTool: tenantToolRules(config) } : {}),
    agentSettings: agentSettingsFrom(config),
  };
}

/** The chat model LLM_PROVIDER names. */
function languageModelOf(config: Config, model: string, endpoint: ReturnType<typeof endpointOf>): LanguageModel {
  if (config.llmProvider === 'gigachat')
    return new GigaChatLanguageModel({
      model,
      // The settings refuse LLM_PROVIDER=gigachat without a key.
      authKey: config.gigachatAuthKey ?? '',
      scope: config.gigachatScope,
      ...(config.gigachatAuthUrl ? { authUrl: config.gigachatAuthUrl } : {}),
      ...(config.gigachatBaseUrl ? { baseURL: config.gigachatBaseUrl } : {}),
      ...(config.gigachatCaFile ? { caFile: config.gigachatCaFile } : {}),
      insecureTls: config.gigachatInsecureTls,
      timeoutMs: config.llmTimeoutMs,
      stream: config.llmStream,
    });
  return new OpenAILanguageModel({
    model,
    stream: config.llmStream,
    toolExamples: config.toolExamplesInDescription ? 'description' : 'omit',
    flex: config.llmFlex,
    flexTimeoutMs: config.llmFlexTimeoutMs,
    ...endpoint,
  });
}

/** The Redis limiter, connected on first use (a worker whose graphs never call a model opens nothing). */
function lazyRateLimiter(config: Config, redis: RedisConnection | undefined): RequestRateLimiter {
  let limiter: ProviderRateLimiter | undefined;
  const get = () =>
    (limiter ??= new ProviderRateLimiter(redis ?? connectRedis(config, 'worker'), new Keys(config.keyPrefix)));
  return {
    acquire: (...args) => get().acquire(...args),
    settle: (...args) => get().settle(...args),
  };
}

/** Tenant budgets and usage, connected on first model call (two short scripts per fresh call). */
function lazyTenantBudget(
  config: Config,
  redis: RedisConnection | undefined,
): NonNullable<AgentServices['tenantBudget']> {
  let budget: TenantBudget | undefined;
  const get = () => {
    if (budget) return budget;
    const connection = redis ?? connectRedis(config, 'worker');
    return (budget = new TenantBudget(connection, new Keys(config.keyPrefix), {
      defaults: config.tenantBudgetDefaults,
      metrics: new RedisMetrics(connection, config.keyPrefix),
    }));
  };
  return {
    reserve: (...args) => get().reserve(...args),
    settle: (...args) => get().settle(...args),
    release: (...args) => get().release(...args),
  };
}

/** The tenants' answer caches, connected when a run that asked for one first looks up. */
function lazyAnswerCache(
  config: Config,
  redis: RedisConnection | undefined,
): NonNullable<AgentServices['answerCache']> {
  let cache: AnswerCache | undefined;
  const get = () =>
    (cache ??= new AnswerCache(redis ?? connectRedis(config, 'worker'), new Keys(config.keyPrefix), {
      ttlSeconds: config.answerCacheTtlSeconds,
    }));
  return {
    lookup: (...args) => get().lookup(...args),
    store: (...args) => get().store(...args),
    currentVersions: (...args) => get().currentVersions(...args),
  };
}

/**
 * The policy file's tool rules, asked per tool per step. A worker knows a run's tenant, not the API key
 * that created it, so key entries do not apply here (the API holds them at the door).
 */
function tenantToolRules(config: Config): NonNullable<AgentServices['allowTool']> {
  const policy = TenantPolicy.fromConfig(config, true);
  return (tenant, tool) => toolAllowed(policy, tenant, tool);
}
