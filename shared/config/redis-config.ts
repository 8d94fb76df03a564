import {
  integer,
  invalidConfiguration,
  optional,
  pattern,
  presentEnv,
  readEnv,
  text,
  url,
  withDefault,
  type EnvValues,
  type Reader,
} from './env-readers.js';
import { DEFAULT_TENANT, ID_PATTERN } from '../contracts/ids.js';
import { DEFAULT_KEY_PREFIX } from '../store/keys.js';
import { DEFAULT_QUEUE_PREFIX } from '../contracts/queues.js';
import { checkClusterConfig, parseClusterNodes, type RedisClusterNode } from '../adapters/redis/redis-cluster-nodes.js';

/**
 * The part of the configuration (shared/config/config.ts) that says where agentq's Redis is and how its run
 * store is laid out: all that the CLI's read commands (`status`, `runs`, `steps`, …) need. It is read
 * here without zod, because loading zod is about a fifth of a one-shot command's start (issue 19, CLI
 * cold start); `loadConfig` reads these variables through this module too, so both refuse a bad value
 * with the same message and code. Like shared/config/config.ts, the only other module that reads `process.env`.
 */
export interface RedisConfig {
  /** Unset: `redis://127.0.0.1:6379` for clients; `npm start` starts a private redis-server instead. */
  redisUrl: string | undefined;
  /** Redis Cluster seed nodes (REDIS_CLUSTER_NODES); set = cluster mode, unset = one Redis at `redisUrl`. */
  redisClusterNodes: RedisClusterNode[] | undefined;
  /** BullMQ key prefix (AGENTQ_QUEUE_PREFIX). @default 'bull' */
  queuePrefix: string;
  /** Run-store key prefix (AGENTQ_KEY_PREFIX). @default 'agentq' */
  keyPrefix: string;
  /** Tenant used by the CLI and the client when none is given. @default 'default' */
  tenant: string;
  /** Finished runs expire after this long. @default 7 days */
  retentionSeconds: number;
  /** Each run's event stream is trimmed to about this many events. @default 1000 */
  eventsMaxLen: number;
  /** Step-queue shards (AGENTQ_SHARDS); the same in every process of a deployment. @default 1 */
  shards: number;
  /** Producers' Redis command timeout (AGENTQ_REDIS_COMMAND_TIMEOUT_MS). @default 750 */
  redisCommandTimeoutMs: number;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

const SHARDS_TYPE =
  'AGENTQ_SHARDS must be a whole number from 1 to 1024 (the number of step-queue shards; 1 unless you run Redis Cluster)';

/**
 * Each variable with its reader. The messages are zod's for the schema these variables had in
 * shared/config/config.ts (test/unit/redis-config.test.ts holds them to it), so moving them out of zod changed
 * no refusal.
 */
const readers = {
  REDIS_URL: optional(url),
  // `host:port,host:port`: parsed once the other variables are valid, as loadConfig did (redisConfigOf).
  REDIS_CLUSTER_NODES: optional(text),
  AGENTQ_QUEUE_PREFIX: withDefault(DEFAULT_QUEUE_PREFIX, pattern(/^[^:]+$/, 'must not contain ":"')),
  AGENTQ_KEY_PREFIX: withDefault(DEFAULT_KEY_PREFIX, pattern(/^[^:{}]+$/, 'must not contain ":", "{" or "}"')),
  AGENTQ_TENANT: withDefault(
    DEFAULT_TENANT,
    pattern(ID_PATTERN, `Invalid string: must match pattern ${String(ID_PATTERN)}`),
  ),
  AGENTQ_RETENTION_SECONDS: withDefault(7 * 24 * 3600, integer({ min: 1 })),
  AGENTQ_EVENTS_MAXLEN: withDefault(1000, integer({ min: 10 })),
  AGENTQ_SHARDS: withDefault(
    1,
    integer({
      min: 1,
      max: 1024,
      messages: {
        type: SHARDS_TYPE,
        integer: SHARDS_TYPE,
        min: 'AGENTQ_SHARDS must be at least 1 (set 1 unless you run Redis Cluster)',
        max: 'AGENTQ_SHARDS must be at most 1024',
      },
    }),
  ),
  AGENTQ_REDIS_COMMAND_TIMEOUT_MS: withDefault(750, integer({ min: 50 })),
} satisfies Record<string, Reader<unknown>>;

/** AGENTQ_TENANT's reader, for the other parts that need the default tenant (shared/config/search-config.ts). */
export const TENANT_READER = readers.AGENTQ_TENANT;

/** The environment variables this module reads (the README's configuration table lists each). */
export const REDIS_ENV_NAMES = Object.keys(readers) as (keyof typeof readers)[];

type RedisEnv = EnvValues<typeof readers>;

/**
 * Reads this module's variables of `env` (empty values already dropped, see `presentEnv`): their values,
 * or `NAME: message` for each problem, as `loadConfig` words zod's.
 */
export function parseRedisEnv(env: Record<string, string>): { values: RedisEnv; problems: string[] } {
  return readEnv(readers, env);
}

/** The settings from valid values; refuses a malformed REDIS_CLUSTER_NODES or a cluster setting that contradicts the others. */
export function redisConfigOf(values: RedisEnv): RedisConfig {
  const redisClusterNodes =
    values.REDIS_CLUSTER_NODES === undefined ? undefined : parseClusterNodes(values.REDIS_CLUSTER_NODES);
  if (redisClusterNodes) checkClusterConfig(values.REDIS_URL, values.AGENTQ_QUEUE_PREFIX);
  return {
    redisUrl: values.REDIS_URL,
    redisClusterNodes,
    queuePrefix: values.AGENTQ_QUEUE_PREFIX,
    keyPrefix: values.AGENTQ_KEY_PREFIX,
    tenant: values.AGENTQ_TENANT,
    retentionSeconds: values.AGENTQ_RETENTION_SECONDS,
    eventsMaxLen: values.AGENTQ_EVENTS_MAXLEN,
    shards: values.AGENTQ_SHARDS,
    redisCommandTimeoutMs: values.AGENTQ_REDIS_COMMAND_TIMEOUT_MS,
  };
}

/**
 * Only the Redis settings, for a command that needs nothing else: other variables are not read, so a
 * bad one (say AGENTQ_PRICES) does not stop `agentq status`; the worker and the API still refuse it.
 */
export function readRedisConfig(env: NodeJS.ProcessEnv = process.env): RedisConfig {
  const { values, problems } = parseRedisEnv(presentEnv(env));
  if (problems.length > 0) throw invalidConfiguration(problems);
  return redisConfigOf(values);
}

export { invalidConfiguration, presentEnv };
