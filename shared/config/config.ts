import { z } from 'zod';
import { AgentqError } from '../contracts/errors.js';
import { ID_PATTERN } from '../contracts/ids.js';
import { parseContextWindows, type ContextWindowTable } from '../llm/context-window.js';
import { parsePriceTable, type PriceTable } from '../llm/price-table.js';
import { parseRateLimits, type RateLimitTable } from '../llm/rate-limit-table.js';
import { mcpServersSchema, type McpServers } from '../adapters/mcp/mcp-servers-schema.js';
import { invalidConfiguration, parseRedisEnv, presentEnv, redisConfigOf, type RedisConfig } from './redis-config.js';
import { parseSearchEnv, searchConfigOf, type SearchConfig } from './search-config.js';
import { parseTenantBudgetLimits, type TenantBudgetLimits } from '../operations/limits/tenant-budget-limits.js';
import { faultConfigOf, faultEnvShape, type FaultConfig } from './fault-config.js';

const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);
const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === 'true' || value === '1' || value === 'yes');

/**
 * Every environment variable agentq reads, with its default, but the Redis ones (shared/config/redis-config.ts,
 * read without zod so the CLI's read commands start fast). These two are the only modules that read
 * `process.env`; everything else takes the typed `Config`. The README's configuration table mirrors them.
 */
const envSchema = z.object({
  NODE_ENV: z.string().default('development'),
  AGENTQ_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  AGENTQ_DEFAULT_MAX_STEPS: int(100, 1),
  AGENTQ_DEFAULT_DEADLINE_MS: int(0),
  AGENTQ_WORKER_CONCURRENCY: int(8, 1),
  AGENTQ_EAGER_HOPS: int(20),
  AGENTQ_STATE_CACHE_SIZE: int(1000),
  AGENTQ_LOCK_DURATION_MS: int(3000, 1000),
  AGENTQ_TAKE_LOCK_MS: int(30_000, 1000),
  AGENTQ_STALLED_INTERVAL_MS: int(1000, 500),
  AGENTQ_LIVENESS_INTERVAL_MS: int(1000, 100),
  AGENTQ_STEP_STARTS_PER_TURN: int(32, 1),
  AGENTQ_LIVENESS_TTL_MS: int(3000, 300),
  AGENTQ_PAID_CLAIM_MS: int(600_000, 1000),
  AGENTQ_MAX_STALLED_COUNT: int(10, 1),
  AGENTQ_RECONCILE_INTERVAL_MS: int(10_000, 100),
  AGENTQ_RECONCILE_AFTER_MS: int(30_000, 100),
  AGENTQ_SHUTDOWN_GRACE_MS: int(25_000, 0),
  AGENTQ_KEEP_COMPLETED_JOBS: int(1000),
  AGENTQ_KEEP_FAILED_JOBS: int(5000),
  AGENTQ_QUEUE_EVENTS_MAXLEN: int(1000, 10),
  AGENTQ_ALLOW_UNSAFE_REDIS: bool(false),
  AGENTQ_LOCAL_REDIS_PORT: z.coerce.number().int().min(1).max(65_535).default(6379),
  AGENTQ_GRAPH_HEARTBEAT_MS: int(5000, 100),
  AGENTQ_UNSERVED_GRAPH_WAIT_MS: int(60_000),
  // HTTP API (the README configuration table describes each).
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  AGENTQ_API_KEYS: z.string().optional(),
  AGENTQ_API_KEYS_FILE: z.string().optional(),
  AGENTQ_BODY_LIMIT_BYTES: int(1024 * 1024, 1024),
  AGENTQ_RATE_LIMIT_PER_MINUTE: int(600),
  AGENTQ_TENANT_MAX_INFLIGHT: int(1000),
  AGENTQ_TENANT_FAIR_SHARE: int(50),
  AGENTQ_TENANT_BUDGET_DEFAULTS: z
    .string()
    .default('{}')
    .transform((value, context): TenantBudgetLimits => {
      try {
        return parseTenantBudgetLimits(JSON.parse(value));
      } catch (error) {
        context.addIssue({
          code: 'custom',
          message: `must be JSON like {"tokensPerDay":1000000,"costUsdPerMonth":50}: ${(error as Error).message}`,
        });
        return {};
      }
    }),
  AGENTQ_DASHBOARD_WRITE: bool(false),
  AGENTQ_DASHBOARD_SESSION_SECONDS: int(12 * 3600, 60),
  AGENTQ_TRACE_URL: z
    .string()
    .refine(
      (value) => value.includes('{traceId}') && /^https?:\/\//.test(value),
      'must be an http(s) URL containing {traceId}, e.g. http://localhost:16686/trace/{traceId}',
    )
    .optional(),
  // Webhooks.
  AGENTQ_WEBHOOK_SECRETS: z
    .string()
    .default('')
    .transform((value, context) => {
      const secrets: Record<string, string> = {};
      for (const entry of value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)) {
        const colon = entry.indexOf(':');
        const tenant = colon < 0 ? '' : entry.slice(0, colon);
        if ((tenant !== '*' && !ID_PATTERN.test(tenant)) || colon === entry.length - 1) {
          context.addIssue({
            code: 'custom',
            message: `entry '${tenant || entry.slice(0, 12)}…' must be <tenant>:<secret> (tenant '*' = every tenant without its own)`,
          });
          continue;
        }
        secrets[tenant] = entry.slice(colon + 1);
      }
      return secrets;
    }),
  AGENTQ_WEBHOOK_ALLOW_PRIVATE: bool(false),
  AGENTQ_WEBHOOK_MAX_ATTEMPTS: int(8, 1),
  AGENTQ_WEBHOOK_BACKOFF_MS: int(2000, 10),
  AGENTQ_WEBHOOK_TIMEOUT_MS: int(10_000, 100),
  AGENTQ_WEBHOOK_CONCURRENCY: int(4, 1),
  // Language model and agents (the README configuration table describes each).
  OPENAI_BASE_URL: z.string().url().optional(),
  OPENAI_API_KEY: z.string().optional(),
  LLM_MODEL: z.string().min(1).optional(),
  AGENTQ_LLM_TIMEOUT_MS: int(60_000, 100),
  AGENTQ_LLM_STREAM: bool(true),
  AGENTQ_LLM_MAX_TOKENS: z.coerce.number().int().min(1).optional(),
  AGENTQ_MAX_TOOL_ROUNDS: int(10, 1),
  AGENTQ_MAX_TOOL_RESULT_CHARS: int(20_000, 200),
  AGENTQ_PRICES: z
    .string()
    .default('')
    .transform((value, context) => {
      const { table, problems } = parsePriceTable(value);
      for (const message of problems) context.addIssue({ code: 'custom', message });
      return table;
    }),
  AGENTQ_TRACE_CONTENT: bool(false),
  // Document ingestion and search (the README configuration table describes each).
  AGENTQ_INGEST_CONCURRENCY: int(2, 0),
  AGENTQ_INGEST_MAX_BYTES: int(50 * 1024 * 1024, 1),
  AGENTQ_INGEST_PARSE_TIMEOUT_MS: int(120_000, 100),
  AGENTQ_INGEST_WRITE_TIMEOUT_MS: int(60_000, 100),
  AGENTQ_CHUNK_TOKENS: int(400, 32),
  AGENTQ_CHUNK_OVERLAP_TOKENS: int(50, 0),
  // More agents: embeddings, provider limits, memory, http_fetch (the README configuration table describes each).
  AGENTQ_LOCAL_EMBED_THREADS: int(1, 1),
  AGENTQ_LOCAL_DENSE_WEIGHT: z.coerce.number().min(0).max(10).default(0.3),
  MODERATION_MODEL: z.string().min(1).optional(),
  AGENTQ_EMBED_BATCH_SIZE: int(128, 1),
  AGENTQ_RATE_LIMITS: z
    .string()
    .default('')
    .transform((value, context) => {
      const { table, problems } = parseRateLimits(value);
      for (const message of problems) context.addIssue({ code: 'custom', message });
      return table;
    }),
  AGENTQ_CONTEXT_WINDOW: int(8192, 256),
  AGENTQ_CONTEXT_WINDOWS: z
    .string()
    .default('')
    .transform((value, context) => {
      const { table, problems } = parseContextWindows(value);
      for (const message of problems) context.addIssue({ code: 'custom', message });
      return table;
    }),
  AGENTQ_SUMMARIZE_AT: z.coerce.number().min(0).max(1).default(0.75),
  AGENTQ_RAG_TOP_K: z.coerce.number().int().min(1).max(20).default(6),
  AGENTQ_RAG_DENSE_WEIGHT: z.coerce.number().min(0).max(10).default(2),
  AGENTQ_MCP_SERVERS: z
    .string()
    .default('{}')
    .transform((value, context): McpServers => {
      let json: unknown;
      try {
        json = JSON.parse(value.trim() === '' ? '{}' : value);
      } catch (error) {
        context.addIssue({
          code: 'custom',
          message: `not JSON (${(error as Error).message}): give {"<name>": {"command": "…", "args": […]}} or {"<name>": {"url": "http://…/mcp"}}`,
        });
        return {};
      }
      const parsed = mcpServersSchema.safeParse(json);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          context.addIssue({ code: 'custom', message: `${issue.path.join('.')}: ${issue.message}` });
        return {};
      }
      return parsed.data;
    }),
  AGENTQ_MCP_CONNECT_TIMEOUT_MS: int(10_000, 100),
  AGENTQ_MCP_CALL_TIMEOUT_MS: int(60_000, 100),
  AGENTQ_HTTP_FETCH_ALLOW_HOSTS: z
    .string()
    .default('')
    .transform((value, context) => {
      const hosts = value
        .split(',')
        .map((item) => item.trim().toLowerCase())
        .filter(Boolean);
      for (const host of hosts) {
        if (
          !/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$|^\[?[0-9a-f:.]+\]?$/.test(host)
        ) {
          context.addIssue({
            code: 'custom',
            message: `'${host}' is not a host name: use names like docs.example.com or *.example.com (any subdomain), comma-separated`,
          });
        }
      }
      return hosts;
    }),
  AGENTQ_HTTP_FETCH_MAX_BYTES: int(1024 * 1024, 1024),
  AGENTQ_HTTP_FETCH_TIMEOUT_MS: int(10_000, 100),
  // Agentic RAG chat (the README configuration table describes it).
  AGENTQ_CHAT_WAIT_MS: int(30_000, 0),
});

/** Issue 34's settings (what a fault may cost) are a block of their own: shared/config/fault-config.ts. */
const fullEnvSchema = envSchema.extend(faultEnvShape);

/** The whole configuration: the Redis settings (`RedisConfig`), the search settings (`SearchConfig`) and the rest. */
export interface Config extends RedisConfig, SearchConfig, FaultConfig {
  production: boolean;
  logLevel: string;
  defaultMaxSteps: number;
  /** 0 = no deadline unless a run sets one. */
  defaultDeadlineMs: number;
  concurrency: number;
  /** Steps of one run a worker may run in a row by eager dispatch before its next job goes through the queue (0: off). */
  eagerHops: number;
  /** Runs whose latest state a worker keeps in memory (LRU; 0: off). */
  stateCacheSize: number;
  /** A held job's lock (AGENTQ_LOCK_DURATION_MS), renewed by the liveness thread (step jobs) or BullMQ (others). @default 3000 */
  lockDurationMs: number;
  /**
   * A step job's lock when it is taken (AGENTQ_TAKE_LOCK_MS): until the liveness thread holds it, which a
   * blocked event loop can delay by seconds; a dead process's are released by its peers. @default 30000
   */
  takeLockMs: number;
  stalledIntervalMs: number;
  /** Step jobs a worker process starts per turn of its event loop (AGENTQ_STEP_STARTS_PER_TURN). @default 32 */
  stepStartsPerTurn: number;
  /** How often a worker process's heartbeat thread proves it alive (AGENTQ_LIVENESS_INTERVAL_MS). @default 1000 */
  livenessIntervalMs: number;
  /** How long a proof of life lasts: a dead process's claims lapse within it (AGENTQ_LIVENESS_TTL_MS). @default 3000 */
  livenessTtlMs: number;
  /** The longest a claim on paid work holds when its node has no timeout (AGENTQ_PAID_CLAIM_MS). @default 10 min */
  paidClaimMs: number;
  maxStalledCount: number;
  reconcileIntervalMs: number;
  reconcileAfterMs: number;
  shutdownGraceMs: number;
  keepCompletedJobs: number;
  keepFailedJobs: number;
  /** Events kept in each BullMQ queue's event stream (Bull Board, QueueEvents). */
  queueEventsMaxLen: number;
  allowUnsafeRedis: boolean;
  /** `agentq start` without REDIS_URL: use the Redis on this port, or start a private one on it. @default 6379 */
  localRedisPort: number;
  /** Each worker re-announces the graphs it serves this often; an entry unseen for 3× this has expired. @default 5000 */
  graphHeartbeatMs: number;
  /** A run of a graph no live worker serves fails after waiting this long for one. @default 60000 */
  unservedGraphWaitMs: number;
  /** API listen port. @default 3000 */
  port: number;
  /** API listen address; forced to loopback while no API key is configured. @default '127.0.0.1' */
  host: string;
  /** `<key>:<tenant>:<role>,…` (raw; the API hashes them at start-up). */
  apiKeys: string | undefined;
  /** A file of the same entries, one per line or comma-separated. */
  apiKeysFile: string | undefined;
  /** Larger request bodies get 413. @default 1 MiB */
  bodyLimitBytes: number;
  /** Requests per API key per minute; 0 = unlimited. @default 600 */
  rateLimitPerMinute: number;
  /** Runs not yet finished per tenant; 0 = unlimited. @default 1000 */
  tenantMaxInflight: number;
  /**
   * A tenant's unfinished runs (batch questions aside) beyond which its new runs queue behind other
   * tenants' (shared/operations/limits/fair-share.ts); 0 = off. @default 50
   */
  tenantFairShare: number;
  /** Token and cost budgets of a tenant an admin has not set limits for. @default {} (unlimited) */
  tenantBudgetDefaults: TenantBudgetLimits;
  /** Bull Board may retry, remove and promote jobs. @default false (read-only) */
  dashboardWrite: boolean;
  /** Lifetime of a dashboard sign-in cookie. @default 12 h */
  dashboardSessionSeconds: number;
  /** A trace viewer's URL with `{traceId}` (AGENTQ_TRACE_URL): the run inspector links a run's trace id to it. */
  traceUrl: string | null;
  /** Webhook signing secret by tenant; `*` applies to tenants without their own. */
  webhookSecrets: Record<string, string>;
  /** Deliver webhooks to private, loopback and link-local addresses (tests, private networks). @default false */
  webhookAllowPrivate: boolean;
  /** @default 8 */
  webhookMaxAttempts: number;
  /** First retry delay, doubling per attempt. @default 2000 */
  webhookBackoffMs: number;
  /** Per delivery attempt. @default 10000 */
  webhookTimeoutMs: number;
  /** Deliveries at once per worker process. @default 4 */
  webhookConcurrency: number;
  /** OpenAI-compatible chat endpoint (OpenAI, Ollama, vLLM, llama.cpp server). @default OpenAI's */
  openaiBaseUrl: string | undefined;
  /** Bearer key for the endpoint; local servers need none. */
  openaiApiKey: string | undefined;
  /** Chat model id; unset: no language model (LLM graphs fail with a message saying to set it). */
  llmModel: string | undefined;
  /** Per model request; a slower answer fails the attempt (retryable TIMEOUT). @default 60000 */
  llmTimeoutMs: number;
  /** Model requests stream (`stream: true`), so subscribers see tokens as they come. @default true */
  llmStream: boolean;
  /** `max_tokens` of each model request. @default unset (the provider's limit) */
  llmMaxTokens: number | undefined;
  /** Model responses with tool calls per agent run before a final answer is asked for without tools. @default 10 */
  maxToolRounds: number;
  /** Longer tool results are cut with a marker. @default 20000 */
  maxToolResultChars: number;
  /** USD per 1M input/output tokens by model (AGENTQ_PRICES); unknown models cost 0. @default {} */
  prices: PriceTable;
  /** Record prompts, responses and tool arguments/results in spans. @default false */
  traceContent: boolean;
  /** Documents parsed at once per worker process (each in its own worker thread); 0 = this process ingests nothing. @default 2 */
  ingestConcurrency: number;
  /** Larger documents are refused at ingest. @default 50 MiB */
  ingestMaxBytes: number;
  /** A document whose parsing takes longer fails (its thread is stopped). @default 120000 */
  ingestParseTimeoutMs: number;
  /** Each piece of a document's bytes written to Redis at ingest may take this long (not the sub-second command timeout). @default 60000 */
  ingestWriteTimeoutMs: number;
  /** Token budget of one chunk (cl100k_base tokens, overlap included). @default 400 */
  chunkTokens: number;
  /** Tokens a chunk repeats from the end of the previous one in the same section. @default 50 */
  chunkOverlapTokens: number;
  /** Threads per process that run the local embedding model (AGENTQ_LOCAL_EMBED_THREADS). @default 1 */
  localEmbedThreads: number;
  /** Weight of the local model's normalised cosine beside BM25's normalised score in hybrid searches (AGENTQ_LOCAL_DENSE_WEIGHT). @default 0.3 */
  localDenseWeight: number;
  /** MCP servers whose tools workers offer (AGENTQ_MCP_SERVERS). */
  mcpServers: McpServers;
  mcpConnectTimeoutMs: number;
  mcpCallTimeoutMs: number;
  /** Moderation model on the same endpoint (`/v1/moderations`), behind the `moderation` guardrail. */
  moderationModel: string | undefined;
  /** Texts per embeddings request. @default 128 */
  embedBatchSize: number;
  /** Requests/min and tokens/min per model (`*` = every model), shared by all workers; empty = unlimited. @default {} */
  rateLimits: RateLimitTable;
  /** Context window (tokens) of models without their own entry. @default 8192 */
  contextWindow: number;
  /** Context windows by model (AGENTQ_CONTEXT_WINDOWS). @default {} */
  contextWindows: ContextWindowTable;
  /** Summarise the history when a prompt would exceed this share of the context window; 0 = never. @default 0.75 */
  summarizeAt: number;
  /** Passages of each rag-agent search the model reads (AGENTQ_RAG_TOP_K; a request's `top_k` overrides). */
  ragTopK: number;
  /** Weight of the extractive answerer's dense sentence match with the local model (AGENTQ_RAG_DENSE_WEIGHT); 0 = not asked. @default 2 */
  ragDenseWeight: number;
  /** Hosts the `http_fetch` tool may fetch (`*.example.com` = any subdomain); empty = the tool is off. @default [] */
  httpFetchAllowHosts: string[];
  /** `http_fetch` reads at most this many bytes of a response. @default 1 MiB */
  httpFetchMaxBytes: number;
  /** `http_fetch` gives up after this long, redirects included. @default 10000 */
  httpFetchTimeoutMs: number;
  /** `POST /v1/agent/chat` waits this long for the answer before answering 202 with the run to poll; 0 = never wait. @default 30000 */
  chatWaitMs: number;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = presentEnv(env);
  const redis = parseRedisEnv(present);
  const search = parseSearchEnv(present);
  const parsed = fullEnvSchema.safeParse(present);
  if (!parsed.success || redis.problems.length > 0 || search.problems.length > 0) {
    const issues = parsed.success
      ? []
      : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw invalidConfiguration([...redis.problems, ...search.problems, ...issues]);
  }
  const e = parsed.data;
  if (e.AGENTQ_LOCK_DURATION_MS < 2 * e.AGENTQ_LIVENESS_INTERVAL_MS) {
    throw new AgentqError(
      'INVALID_INPUT',
      `invalid configuration: AGENTQ_LOCK_DURATION_MS (${e.AGENTQ_LOCK_DURATION_MS}) must be at least twice AGENTQ_LIVENESS_INTERVAL_MS (${e.AGENTQ_LIVENESS_INTERVAL_MS}): the liveness thread renews held jobs' locks at that interval`,
    );
  }
  if (e.AGENTQ_TAKE_LOCK_MS < e.AGENTQ_LOCK_DURATION_MS) {
    throw new AgentqError(
      'INVALID_INPUT',
      `invalid configuration: AGENTQ_TAKE_LOCK_MS (${e.AGENTQ_TAKE_LOCK_MS}) must be at least AGENTQ_LOCK_DURATION_MS (${e.AGENTQ_LOCK_DURATION_MS}): a step job's first lock must last until the liveness thread holds it`,
    );
  }
  if (e.AGENTQ_LIVENESS_TTL_MS < 2 * e.AGENTQ_LIVENESS_INTERVAL_MS) {
    throw new AgentqError(
      'INVALID_INPUT',
      `invalid configuration: AGENTQ_LIVENESS_TTL_MS (${e.AGENTQ_LIVENESS_TTL_MS}) must be at least twice AGENTQ_LIVENESS_INTERVAL_MS (${e.AGENTQ_LIVENESS_INTERVAL_MS}), or one late beat would declare a live worker dead`,
    );
  }
  const searchConfig = searchConfigOf(search.values);
  return {
    ...redisConfigOf(redis.values),
    ...searchConfig,
    ...faultConfigOf(e),
    production: e.NODE_ENV === 'production',
    logLevel: e.AGENTQ_LOG_LEVEL,
    defaultMaxSteps: e.AGENTQ_DEFAULT_MAX_STEPS,
    defaultDeadlineMs: e.AGENTQ_DEFAULT_DEADLINE_MS,
    concurrency: e.AGENTQ_WORKER_CONCURRENCY,
    eagerHops: e.AGENTQ_EAGER_HOPS,
    stateCacheSize: e.AGENTQ_STATE_CACHE_SIZE,
    lockDurationMs: e.AGENTQ_LOCK_DURATION_MS,
    takeLockMs: e.AGENTQ_TAKE_LOCK_MS,
    stalledIntervalMs: e.AGENTQ_STALLED_INTERVAL_MS,
    livenessIntervalMs: e.AGENTQ_LIVENESS_INTERVAL_MS,
    stepStartsPerTurn: e.AGENTQ_STEP_STARTS_PER_TURN,
    livenessTtlMs: e.AGENTQ_LIVENESS_TTL_MS,
    paidClaimMs: e.AGENTQ_PAID_CLAIM_MS,
    maxStalledCount: e.AGENTQ_MAX_STALLED_COUNT,
    reconcileIntervalMs: e.AGENTQ_RECONCILE_INTERVAL_MS,
    reconcileAfterMs: e.AGENTQ_RECONCILE_AFTER_MS,
    shutdownGraceMs: e.AGENTQ_SHUTDOWN_GRACE_MS,
    keepCompletedJobs: e.AGENTQ_KEEP_COMPLETED_JOBS,
    keepFailedJobs: e.AGENTQ_KEEP_FAILED_JOBS,
    queueEventsMaxLen: e.AGENTQ_QUEUE_EVENTS_MAXLEN,
    allowUnsafeRedis: e.AGENTQ_ALLOW_UNSAFE_REDIS,
    localRedisPort: e.AGENTQ_LOCAL_REDIS_PORT,
    graphHeartbeatMs: e.AGENTQ_GRAPH_HEARTBEAT_MS,
    unservedGraphWaitMs: e.AGENTQ_UNSERVED_GRAPH_WAIT_MS,
    port: e.PORT,
    host: e.HOST,
    apiKeys: e.AGENTQ_API_KEYS,
    apiKeysFile: e.AGENTQ_API_KEYS_FILE,
    bodyLimitBytes: e.AGENTQ_BODY_LIMIT_BYTES,
    rateLimitPerMinute: e.AGENTQ_RATE_LIMIT_PER_MINUTE,
    tenantMaxInflight: e.AGENTQ_TENANT_MAX_INFLIGHT,
    tenantFairShare: e.AGENTQ_TENANT_FAIR_SHARE,
    tenantBudgetDefaults: e.AGENTQ_TENANT_BUDGET_DEFAULTS,
    dashboardWrite: e.AGENTQ_DASHBOARD_WRITE,
    dashboardSessionSeconds: e.AGENTQ_DASHBOARD_SESSION_SECONDS,
    traceUrl: e.AGENTQ_TRACE_URL ?? null,
    webhookSecrets: e.AGENTQ_WEBHOOK_SECRETS,
    webhookAllowPrivate: e.AGENTQ_WEBHOOK_ALLOW_PRIVATE,
    webhookMaxAttempts: e.AGENTQ_WEBHOOK_MAX_ATTEMPTS,
    webhookBackoffMs: e.AGENTQ_WEBHOOK_BACKOFF_MS,
    webhookTimeoutMs: e.AGENTQ_WEBHOOK_TIMEOUT_MS,
    webhookConcurrency: e.AGENTQ_WEBHOOK_CONCURRENCY,
    openaiBaseUrl: e.OPENAI_BASE_URL,
    openaiApiKey: e.OPENAI_API_KEY,
    llmModel: e.LLM_MODEL,
    llmTimeoutMs: e.AGENTQ_LLM_TIMEOUT_MS,
    llmStream: e.AGENTQ_LLM_STREAM,
    llmMaxTokens: e.AGENTQ_LLM_MAX_TOKENS,
    maxToolRounds: e.AGENTQ_MAX_TOOL_ROUNDS,
    maxToolResultChars: e.AGENTQ_MAX_TOOL_RESULT_CHARS,
    prices: e.AGENTQ_PRICES,
    traceContent: e.AGENTQ_TRACE_CONTENT,
    ingestConcurrency: e.AGENTQ_INGEST_CONCURRENCY,
    ingestMaxBytes: e.AGENTQ_INGEST_MAX_BYTES,
    ingestParseTimeoutMs: e.AGENTQ_INGEST_PARSE_TIMEOUT_MS,
    ingestWriteTimeoutMs: e.AGENTQ_INGEST_WRITE_TIMEOUT_MS,
    chunkTokens: e.AGENTQ_CHUNK_TOKENS,
    // Overlap must leave room for new text in every chunk.
    chunkOverlapTokens: Math.min(e.AGENTQ_CHUNK_OVERLAP_TOKENS, Math.floor(e.AGENTQ_CHUNK_TOKENS / 2)),
    localEmbedThreads: e.AGENTQ_LOCAL_EMBED_THREADS,
    localDenseWeight: e.AGENTQ_LOCAL_DENSE_WEIGHT,
    moderationModel: e.MODERATION_MODEL,
    mcpServers: e.AGENTQ_MCP_SERVERS,
    mcpConnectTimeoutMs: e.AGENTQ_MCP_CONNECT_TIMEOUT_MS,
    mcpCallTimeoutMs: e.AGENTQ_MCP_CALL_TIMEOUT_MS,
    embedBatchSize: e.AGENTQ_EMBED_BATCH_SIZE,
    rateLimits: e.AGENTQ_RATE_LIMITS,
    contextWindow: e.AGENTQ_CONTEXT_WINDOW,
    contextWindows: e.AGENTQ_CONTEXT_WINDOWS,
    summarizeAt: e.AGENTQ_SUMMARIZE_AT,
    ragTopK: e.AGENTQ_RAG_TOP_K,
    ragDenseWeight: e.AGENTQ_RAG_DENSE_WEIGHT,
    httpFetchAllowHosts: e.AGENTQ_HTTP_FETCH_ALLOW_HOSTS,
    httpFetchMaxBytes: e.AGENTQ_HTTP_FETCH_MAX_BYTES,
    httpFetchTimeoutMs: e.AGENTQ_HTTP_FETCH_TIMEOUT_MS,
    chatWaitMs: e.AGENTQ_CHAT_WAIT_MS,
  };
}

export { DEFAULT_REDIS_URL, readRedisConfig, type RedisConfig } from './redis-config.js';
export { readSearchConfig, type EmbedProvider, type SearchConfig } from './search-config.js';
