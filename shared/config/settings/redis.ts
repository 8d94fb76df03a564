// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { choice, integer, matching, text, url } from '../setting-builders.js';
import { defineArea, type AreaConfig } from '../settings-area.js';
import { DEFAULT_TENANT, ID_PATTERN } from '../../contracts/ids.js';
import { DEFAULT_KEY_PREFIX, DEFAULT_QUEUE_PREFIX } from '../../contracts/queues.js';
import { checkClusterConfig, parseClusterNodes } from '../redis-cluster-nodes.js';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * Where agentq's Redis is and how its run store is laid out: all that the CLI's read commands
 * (`status`, `runs`, `steps`, …) need, read by them without the rest (shared/config/redis-config.ts).
 */
export const redisArea = defineArea({
  title: 'Redis and the run store',
  intro:
    'Where Redis is and how the run store is laid out. The CLI’s read commands (`status`, `runs`, `steps`, `wait`, `events`, `purge`) read only these, so a bad value of another variable does not stop them.',
  settings: {
    redisUrl: url({
      env: 'REDIS_URL',
      example: 'redis://127.0.0.1:6379',
      shownDefault: `\`${DEFAULT_REDIS_URL}\``,
      doc: 'Redis for the queues and the run store. Unset in `agentq start`: the local Redis on `AGENTQ_LOCAL_REDIS_PORT`, or a private redis-server started there.',
      when: 'For any other Redis; `rediss://` for TLS.',
    }),
    redisClusterNodes: text({
      env: 'REDIS_CLUSTER_NODES',
      allowed: '`host:port` entries separated by commas',
      doc: 'Redis Cluster seed nodes (any nodes of one cluster): every component connects to the cluster.',
      when: 'To run on a Redis Cluster. Refused together with `REDIS_URL`, and `AGENTQ_QUEUE_PREFIX` must then carry a hash tag such as `{agentq}`.',
    }),
    queuePrefix: matching({
      env: 'AGENTQ_QUEUE_PREFIX',
      default: DEFAULT_QUEUE_PREFIX,
      pattern: /^[^:]+$/,
      allowed: 'text without `:`',
      doc: 'BullMQ key prefix.',
      when: 'On a Redis Cluster: a hash tag such as `{agentq}`.',
    }),
    keyPrefix: matching({
      env: 'AGENTQ_KEY_PREFIX',
      default: DEFAULT_KEY_PREFIX,
      pattern: /^[^:{}]+$/,
      allowed: 'text without `:`, `{` or `}`',
      doc: 'Run-store key prefix.',
      when: 'To let several deployments share one Redis.',
    }),
    tenant: matching({
      env: 'AGENTQ_TENANT',
      default: DEFAULT_TENANT,
      pattern: ID_PATTERN,
      allowed: "1-128 letters, digits, '_', '.' or '-'",
      doc: 'Tenant of the CLI and the client when a request names none.',
    }),
    retentionSeconds: integer({
      env: 'AGENTQ_RETENTION_SECONDS',
      min: 1,
      default: 7 * 24 * 3600,
      shownDefault: '`604800` (7 days)',
      doc: 'Finished runs expire after this long.',
    }),
    recording: choice({
      env: 'AGENTQ_RECORDING',
      values: ['full', 'steps', 'off'],
      default: 'full',
      doc: 'What a run keeps for time travel, beside its other keys and for as long as they are retained: `full` — each superstep’s state change, history length and next tasks (what `agentq fork` needs) and each model and tool call’s request fingerprint and response (what `agentq replay` needs); `steps` — only the former; `off` — nothing (fork and replay refuse such runs). Decided per run when it is created.',
      when: '`steps` or `off` to save Redis memory when nobody forks or replays runs; see docs/guides/time-travel.md for the measured bytes per run.',
    }),
    recordingMaxBytes: integer({
      env: 'AGENTQ_RECORDING_MAX_BYTES',
      min: 1024,
      default: 1024 * 1024,
      shownDefault: '`1048576` (1 MiB)',
      doc: 'Byte budget of one run’s recording (the JSON kept, not counting Redis’s own overhead). Once a run would pass it, the run stops recording (it still runs); fork and replay then refuse the steps past that point, naming the budget.',
      when: 'Raise it for long runs with large prompts you want to replay; lower it to bound Redis memory per run.',
    }),
    eventsMaxLen: integer({
      env: 'AGENTQ_EVENTS_MAXLEN',
      min: 10,
      default: 1000,
      doc: 'Each run’s event stream is trimmed to about this many events.',
    }),
    tokenLogMaxLen: integer({
      env: 'AGENTQ_TOKEN_LOG_MAXLEN',
      min: 10,
      default: 2000,
      doc: 'While someone follows a run (an event stream, `client.stream`), its live model tokens are also kept in a token log trimmed to about this many tokens (whole blocks of about 100), so a follower that reconnects with `Last-Event-ID` gets the ones it missed; one that missed more gets a `token-gap` event instead. Runs nobody follows keep no tokens.',
      when: 'Raise it for clients that stay away longer on long answers; each kept token costs about 150 bytes of Redis memory and AOF.',
    }),
    tokenLogTtlMs: integer({
      env: 'AGENTQ_TOKEN_LOG_TTL_MS',
      min: 1000,
      default: 15 * 60 * 1000,
      shownDefault: '`900000` (15 minutes)',
      doc: 'A run’s token log expires this long after its last token or its last follower’s visit (purging the run deletes it at once); a follower reconnecting later gets a `token-gap` event.',
    }),
    eventWindowMs: integer({
      env: 'AGENTQ_EVENT_WINDOW_MS',
      min: 0,
      default: 3_600_000,
      shownDefault: '`3600000` (1 hour)',
      doc: 'How long an event sent to a run or a correlation key (`POST /v1/events`) is kept for a `context.waitFor` that comes later; 0 keeps none (only waits open at the send get it).',
      when: 'Raise it when events may arrive long before the step that waits for them; it costs the events’ bytes for that long.',
    }),
    shards: integer({
      env: 'AGENTQ_SHARDS',
      min: 1,
      max: 1024,
      default: 1,
      allowed: 'a whole number from 1 to 1024 (the number of step-queue shards; 1 unless you run Redis Cluster)',
      doc: 'Step-queue shards: a run’s keys and its step jobs share shard `k`’s hash tag, so they spread evenly over the masters of a Redis Cluster.',
      when: 'On a Redis Cluster: a multiple of the masters. Every worker and producer of a deployment must use the same value (the first worker records it; later ones with another value refuse to start); changing it needs a drained deployment.',
    }),
    redisCommandTimeoutMs: integer({
      env: 'AGENTQ_REDIS_COMMAND_TIMEOUT_MS',
      min: 50,
      default: 750,
      doc: 'Producers (client, API) fail fast when Redis does not answer: a request already waiting when Redis stops gets its 503 within this time, later ones at once.',
      when: 'Raise it for a Redis far away (round trips near it).',
    }),
  },
  /** Refuses a malformed REDIS_CLUSTER_NODES, or cluster settings that contradict the others. */
  configOf: ({ redisClusterNodes, ...values }) => {
    const nodes = redisClusterNodes === undefined ? undefined : parseClusterNodes(redisClusterNodes);
    if (nodes) checkClusterConfig(values.redisUrl, values.queuePrefix);
    return { ...values, redisClusterNodes: nodes };
  },
});

/** Where agentq's Redis is and how its run store is laid out. */
export type RedisConfig = AreaConfig<typeof redisArea>;
