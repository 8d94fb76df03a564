import { AgentqError } from './errors.js';
import { DEFAULT_TENANT, ID_PATTERN } from './ids.js';
import { DEFAULT_KEY_PREFIX } from './keys.js';
import { DEFAULT_QUEUE_PREFIX } from './queues.js';
import { checkClusterConfig, parseClusterNodes, type RedisClusterNode } from './redis/redis-cluster-nodes.js';

/**
 * The part of the configuration (shared/config.ts) that says where agentq's Redis is and how its run
 * store is laid out: all that the CLI's read commands (`status`, `runs`, `steps`, …) need. It is read
 * here without zod, because loading zod is about a fifth of a one-shot command's start (issue 19, CLI
 * cold start); `loadConfig` reads these variables through this module too, so both refuse a bad value
 * with the same message and code. Like shared/config.ts, the only other module that reads `process.env`.
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

/** What a variable's reader makes of its value: the value, or the problems that refuse it. */
type Read<T> = { value: T; problems?: undefined } | { value?: undefined; problems: string[] };
type Reader<T> = (value: string | undefined) => Read<T>;

const SHARDS_TYPE = 'AGENTQ_SHARDS must be a whole number from 1 to 1024 (the number of step-queue shards; 1 unless you run Redis Cluster)';

/**
 * Each variable with its reader. The messages are zod's for the schema these variables had in
 * shared/config.ts (test/unit/redis-config.test.ts holds them to it), so moving them out of zod changed
 * no refusal.
 */
const readers = {
  REDIS_URL: optional(url),
  // `host:port,host:port`: parsed once the other variables are valid, as loadConfig did (redisConfigOf).
  REDIS_CLUSTER_NODES: optional((value) => ({ value })),
  AGENTQ_QUEUE_PREFIX: withDefault(DEFAULT_QUEUE_PREFIX, pattern(/^[^:]+$/, 'must not contain ":"')),
  AGENTQ_KEY_PREFIX: withDefault(DEFAULT_KEY_PREFIX, pattern(/^[^:{}]+$/, 'must not contain ":", "{" or "}"')),
  AGENTQ_TENANT: withDefault(DEFAULT_TENANT, pattern(ID_PATTERN, `Invalid string: must match pattern ${String(ID_PATTERN)}`)),
  AGENTQ_RETENTION_SECONDS: withDefault(7 * 24 * 3600, integer({ min: 1 })),
  AGENTQ_EVENTS_MAXLEN: withDefault(1000, integer({ min: 10 })),
  AGENTQ_SHARDS: withDefault(
    1,
    integer({
      min: 1,
      max: 1024,
      messages: { type: SHARDS_TYPE, integer: SHARDS_TYPE, min: 'AGENTQ_SHARDS must be at least 1 (set 1 unless you run Redis Cluster)', max: 'AGENTQ_SHARDS must be at most 1024' },
    }),
  ),
  AGENTQ_REDIS_COMMAND_TIMEOUT_MS: withDefault(750, integer({ min: 50 })),
} satisfies Record<string, Reader<unknown>>;

/** The environment variables this module reads (the README's configuration table lists each). */
export const REDIS_ENV_NAMES = Object.keys(readers) as (keyof typeof readers)[];

type RedisEnv = { [Name in keyof typeof readers]: ReturnType<(typeof readers)[Name]> extends Read<infer T> ? T : never };

/** `env` without its empty values: an empty variable means unset, everywhere in the configuration. */
export function presentEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const present: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && value !== '') present[name] = value;
  return present;
}

/**
 * Reads this module's variables of `env` (empty values already dropped, see `presentEnv`): their values,
 * or `NAME: message` for each problem, as `loadConfig` words zod's.
 */
export function parseRedisEnv(env: Record<string, string>): { values: RedisEnv; problems: string[] } {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const name of REDIS_ENV_NAMES) {
    const read = (readers[name] as Reader<unknown>)(env[name]);
    if (read.problems) problems.push(...read.problems.map((message) => `${name}: ${message}`));
    else values[name] = read.value;
  }
  return { values: values as RedisEnv, problems };
}

/** The refusal of a configuration with these problems (`NAME: message` each). */
export function invalidConfiguration(problems: string[]): AgentqError {
  return new AgentqError('INVALID_INPUT', `invalid configuration: ${problems.join('; ')} (see the configuration table in README.md)`);
}

/** The settings from valid values; refuses a malformed REDIS_CLUSTER_NODES or a cluster setting that contradicts the others. */
export function redisConfigOf(values: RedisEnv): RedisConfig {
  const redisClusterNodes = values.REDIS_CLUSTER_NODES === undefined ? undefined : parseClusterNodes(values.REDIS_CLUSTER_NODES);
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

function optional<T>(reader: Reader<T>): Reader<T | undefined> {
  return (value) => (value === undefined ? { value: undefined } : reader(value));
}

function withDefault<T>(fallback: T, reader: Reader<T>): Reader<T> {
  return (value) => (value === undefined ? { value: fallback } : reader(value));
}

/** zod's `z.string().url()`: what `URL` parses once trimmed, kept trimmed and without tabs or line breaks. */
function url(value: string | undefined): Read<string> {
  const trimmed = value!.trim();
  return URL.canParse(trimmed) ? { value: trimmed.replace(/[\t\n\r]/g, '') } : { problems: ['Invalid URL'] };
}

function pattern(regex: RegExp, message: string): Reader<string> {
  return (value) => (regex.test(value!) ? { value: value! } : { problems: [message] });
}

interface IntegerOptions {
  min: number;
  max?: number;
  /** Custom messages (zod's `error` options); zod's own otherwise. */
  messages?: { type: string; integer: string; min: string; max: string };
}

/**
 * zod's `z.coerce.number().int().min(min).max(max)`: `Number(value)` must be finite, then whole (which
 * stops there), then safe and in range (each reported).
 */
function integer({ min, max, messages }: IntegerOptions): Reader<number> {
  return (value) => {
    const number = Number(value);
    if (!Number.isFinite(number)) return { problems: [messages?.type ?? `Invalid input: expected number, received ${String(number)}`] };
    if (!Number.isInteger(number)) return { problems: [messages?.integer ?? 'Invalid input: expected int, received number'] };
    const problems: string[] = [];
    if (!Number.isSafeInteger(number)) {
      problems.push(messages?.integer ?? (number > 0 ? `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}` : `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`));
    }
    if (number < min) problems.push(messages?.min ?? `Too small: expected number to be >=${min}`);
    if (max !== undefined && number > max) problems.push(messages?.max ?? `Too big: expected number to be <=${max}`);
    return problems.length > 0 ? { problems } : { value: number };
  };
}
