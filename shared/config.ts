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
  };
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';
