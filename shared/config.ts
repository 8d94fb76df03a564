import { z } from 'zod';
import { AgentqError } from './errors.js';
import { DEFAULT_TENANT, ID_PATTERN } from './ids.js';
import { DEFAULT_KEY_PREFIX } from './keys.js';
import { DEFAULT_QUEUE_PREFIX } from './queues.js';

const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);
const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .default(fallback ? 'true' : 'false')
    .transform((value) => value === 'true' || value === '1' || value === 'yes');

/**
 * Every environment variable agentq reads, with its default. This is the only module that reads
 * `process.env`; everything else takes the typed `Config`. The README's configuration table mirrors it.
 */
const envSchema = z.object({
  REDIS_URL: z.string().url().optional(),
  NODE_ENV: z.string().default('development'),
  AGENTQ_QUEUE_PREFIX: z.string().min(1).regex(/^[^:]+$/, 'must not contain ":"').default(DEFAULT_QUEUE_PREFIX),
  AGENTQ_KEY_PREFIX: z.string().min(1).regex(/^[^:{}]+$/, 'must not contain ":", "{" or "}"').default(DEFAULT_KEY_PREFIX),
  AGENTQ_TENANT: z.string().regex(ID_PATTERN).default(DEFAULT_TENANT),
  AGENTQ_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  AGENTQ_RETENTION_SECONDS: int(7 * 24 * 3600, 1),
  AGENTQ_EVENTS_MAXLEN: int(1000, 10),
  AGENTQ_DEFAULT_MAX_STEPS: int(100, 1),
  AGENTQ_DEFAULT_DEADLINE_MS: int(0),
  AGENTQ_WORKER_CONCURRENCY: int(8, 1),
  AGENTQ_LOCK_DURATION_MS: int(5000, 1000),
  AGENTQ_STALLED_INTERVAL_MS: int(2500, 500),
  AGENTQ_MAX_STALLED_COUNT: int(10, 1),
  AGENTQ_RECONCILE_INTERVAL_MS: int(10_000, 100),
  AGENTQ_RECONCILE_AFTER_MS: int(30_000, 100),
  AGENTQ_SHUTDOWN_GRACE_MS: int(25_000, 0),
  AGENTQ_KEEP_COMPLETED_JOBS: int(1000),
  AGENTQ_KEEP_FAILED_JOBS: int(5000),
  AGENTQ_REDIS_COMMAND_TIMEOUT_MS: int(1000, 50),
  AGENTQ_ALLOW_UNSAFE_REDIS: bool(false),
  AGENTQ_DATA_DIR: z.string().min(1).default('.agentq'),
  AGENTQ_LOCAL_REDIS_PORT: z.coerce.number().int().min(1).max(65_535).default(6379),
  // HTTP API (producer/api/ENV.md describes each).
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  AGENTQ_API_KEYS: z.string().optional(),
  AGENTQ_API_KEYS_FILE: z.string().optional(),
  AGENTQ_BODY_LIMIT_BYTES: int(1024 * 1024, 1024),
  AGENTQ_RATE_LIMIT_PER_MINUTE: int(600),
  AGENTQ_TENANT_MAX_INFLIGHT: int(1000),
  AGENTQ_DASHBOARD_WRITE: bool(false),
  AGENTQ_DASHBOARD_SESSION_SECONDS: int(12 * 3600, 60),
  // Webhooks.
  AGENTQ_WEBHOOK_SECRETS: z
    .string()
    .default('')
    .transform((value, context) => {
      const secrets: Record<string, string> = {};
      for (const entry of value.split(',').map((item) => item.trim()).filter(Boolean)) {
        const colon = entry.indexOf(':');
        const tenant = colon < 0 ? '' : entry.slice(0, colon);
        if ((tenant !== '*' && !ID_PATTERN.test(tenant)) || colon === entry.length - 1) {
          context.addIssue({ code: 'custom', message: `entry '${tenant || entry.slice(0, 12)}…' must be <tenant>:<secret> (tenant '*' = every tenant without its own)` });
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
});

export interface Config {
  /** Unset: `redis://127.0.0.1:6379` for clients; `npm start` starts a private redis-server instead. */
  redisUrl: string | undefined;
  production: boolean;
  queuePrefix: string;
  keyPrefix: string;
  /** Tenant used by the CLI and the client when none is given. */
  tenant: string;
  logLevel: string;
  /** Finished runs expire after this long. */
  retentionSeconds: number;
  /** Each run's event stream is trimmed to about this many events. */
  eventsMaxLen: number;
  defaultMaxSteps: number;
  /** 0 = no deadline unless a run sets one. */
  defaultDeadlineMs: number;
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  maxStalledCount: number;
  reconcileIntervalMs: number;
  reconcileAfterMs: number;
  shutdownGraceMs: number;
  keepCompletedJobs: number;
  keepFailedJobs: number;
  redisCommandTimeoutMs: number;
  allowUnsafeRedis: boolean;
  /** Local data (the private redis-server's AOF, the embedded store). @default '.agentq' */
  dataDir: string;
  /** `agentq start` without REDIS_URL: use the Redis on this port, or start a private one on it. @default 6379 */
  localRedisPort: number;
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
  /** Bull Board may retry, remove and promote jobs. @default false (read-only) */
  dashboardWrite: boolean;
  /** Lifetime of a dashboard sign-in cookie. @default 12 h */
  dashboardSessionSeconds: number;
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
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new AgentqError('INVALID_INPUT', `invalid configuration: ${problems} (see the configuration table in README.md)`);
  }
  const e = parsed.data;
  return {
    redisUrl: e.REDIS_URL,
    production: e.NODE_ENV === 'production',
    queuePrefix: e.AGENTQ_QUEUE_PREFIX,
    keyPrefix: e.AGENTQ_KEY_PREFIX,
    tenant: e.AGENTQ_TENANT,
    logLevel: e.AGENTQ_LOG_LEVEL,
    retentionSeconds: e.AGENTQ_RETENTION_SECONDS,
    eventsMaxLen: e.AGENTQ_EVENTS_MAXLEN,
    defaultMaxSteps: e.AGENTQ_DEFAULT_MAX_STEPS,
    defaultDeadlineMs: e.AGENTQ_DEFAULT_DEADLINE_MS,
    concurrency: e.AGENTQ_WORKER_CONCURRENCY,
    lockDurationMs: e.AGENTQ_LOCK_DURATION_MS,
    stalledIntervalMs: e.AGENTQ_STALLED_INTERVAL_MS,
    maxStalledCount: e.AGENTQ_MAX_STALLED_COUNT,
    reconcileIntervalMs: e.AGENTQ_RECONCILE_INTERVAL_MS,
    reconcileAfterMs: e.AGENTQ_RECONCILE_AFTER_MS,
    shutdownGraceMs: e.AGENTQ_SHUTDOWN_GRACE_MS,
    keepCompletedJobs: e.AGENTQ_KEEP_COMPLETED_JOBS,
    keepFailedJobs: e.AGENTQ_KEEP_FAILED_JOBS,
    redisCommandTimeoutMs: e.AGENTQ_REDIS_COMMAND_TIMEOUT_MS,
    allowUnsafeRedis: e.AGENTQ_ALLOW_UNSAFE_REDIS,
    dataDir: e.AGENTQ_DATA_DIR,
    localRedisPort: e.AGENTQ_LOCAL_REDIS_PORT,
    port: e.PORT,
    host: e.HOST,
    apiKeys: e.AGENTQ_API_KEYS,
    apiKeysFile: e.AGENTQ_API_KEYS_FILE,
    bodyLimitBytes: e.AGENTQ_BODY_LIMIT_BYTES,
    rateLimitPerMinute: e.AGENTQ_RATE_LIMIT_PER_MINUTE,
    tenantMaxInflight: e.AGENTQ_TENANT_MAX_INFLIGHT,
    dashboardWrite: e.AGENTQ_DASHBOARD_WRITE,
    dashboardSessionSeconds: e.AGENTQ_DASHBOARD_SESSION_SECONDS,
    webhookSecrets: e.AGENTQ_WEBHOOK_SECRETS,
    webhookAllowPrivate: e.AGENTQ_WEBHOOK_ALLOW_PRIVATE,
    webhookMaxAttempts: e.AGENTQ_WEBHOOK_MAX_ATTEMPTS,
    webhookBackoffMs: e.AGENTQ_WEBHOOK_BACKOFF_MS,
    webhookTimeoutMs: e.AGENTQ_WEBHOOK_TIMEOUT_MS,
    webhookConcurrency: e.AGENTQ_WEBHOOK_CONCURRENCY,
  };
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
