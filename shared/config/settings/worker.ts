// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { AgentqError } from '../../contracts/errors.js';
import { choice, flag, integer, text } from '../setting-builders.js';
import { defineArea, type AreaConfig } from '../settings-area.js';

/** The step engine, its locks and liveness, recovery and the process itself. */
export const workerArea = defineArea({
  title: 'Workers and the step engine',
  intro:
    'How workers take, run and recover steps. The lock and liveness settings decide how soon a killed worker’s steps run again; most deployments keep the defaults.',
  settings: {
    nodeEnv: text({
      env: 'NODE_ENV',
      default: 'development',
      doc: '`production` refuses an unsafe Redis (AOF off, an evicting policy) at start.',
      when: 'Set `production` in production.',
    }),
    logLevel: choice({
      env: 'AGENTQ_LOG_LEVEL',
      values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
      doc: 'pino level; logs are JSON on stderr.',
    }),
    defaultMaxSteps: integer({
      env: 'AGENTQ_DEFAULT_MAX_STEPS',
      min: 1,
      default: 100,
      doc: 'Step limit of a run that sets none (`MAX_STEPS`).',
    }),
    defaultDeadlineMs: integer({
      env: 'AGENTQ_DEFAULT_DEADLINE_MS',
      min: 0,
      default: 0,
      doc: 'Deadline of a run that sets none (`DEADLINE`); 0 = none.',
    }),
    concurrency: integer({
      env: 'AGENTQ_WORKER_CONCURRENCY',
      min: 1,
      default: 8,
      doc: 'Steps at once per worker process (shared out among the shards’ step workers).',
      when: 'Raise it for graphs that mostly wait on models or tools; lower it for CPU-heavy nodes.',
    }),
    eagerHops: integer({
      env: 'AGENTQ_EAGER_HOPS',
      min: 0,
      default: 20,
      doc: 'Eager dispatch: steps of one run a worker may run in a row, each handed back by the previous step’s commit script, before the run’s next job goes through the queue like any other (a batch run’s last step likewise starts the batch’s next question in its own slot); 0 = off.',
    }),
    stateCacheSize: integer({
      env: 'AGENTQ_STATE_CACHE_SIZE',
      min: 0,
      default: 1000,
      doc: 'Runs whose latest state a worker keeps in memory (LRU), so a step of such a run reads only its cursor from Redis; with it, the history of a run this worker took in without one (so an eager hop reads no history): memory is up to this many runs’ state and messages; 0 = off.',
    }),
    lockDurationMs: integer({
      env: 'AGENTQ_LOCK_DURATION_MS',
      min: 1000,
      default: 3000,
      doc: 'BullMQ job lock of a held job: step jobs’ are renewed by each worker’s liveness thread, other queues’ by BullMQ. With the stall interval, sets how soon a killed worker’s or a lost step runs again.',
      when: 'At least twice `AGENTQ_LIVENESS_INTERVAL_MS`.',
    }),
    takeLockMs: integer({
      env: 'AGENTQ_TAKE_LOCK_MS',
      min: 1000,
      default: 30_000,
      doc: 'A step job’s lock from when a worker takes it until that worker’s liveness thread holds it (a blocked event loop can delay that by seconds); a killed worker’s are released by its peers when its liveness key lapses.',
      when: 'At least `AGENTQ_LOCK_DURATION_MS`.',
    }),
    stalledIntervalMs: integer({
      env: 'AGENTQ_STALLED_INTERVAL_MS',
      min: 500,
      default: 1000,
      doc: 'How often workers look for stalled jobs.',
    }),
    livenessIntervalMs: integer({
      env: 'AGENTQ_LIVENESS_INTERVAL_MS',
      min: 100,
      default: 1000,
      doc: 'How often a worker process’s liveness thread proves it alive (a Redis key per shard).',
    }),
    stepRedisTimeoutMs: integer({
      env: 'AGENTQ_STEP_REDIS_TIMEOUT_MS',
      min: 100,
      max: 600_000,
      default: 5000,
      doc: 'A step’s own Redis commands (take, begin, commit, paid claims and saves) fail after this instead of waiting, and the step is parked without spending an attempt. A worker whose data connections have not answered a round trip for this long stops beating, so its peers take its steps over; it beats again once they answer.',
      when: 'Raise it if Redis is slow to answer under your load (steps parked with `Command timed out`).',
    }),
    stepStartsPerTurn: integer({
      env: 'AGENTQ_STEP_STARTS_PER_TURN',
      min: 1,
      default: 32,
      doc: 'Step jobs, intake jobs and model requests a worker process starts per turn of its event loop: thousands arriving at once are spread over many turns, so timers and I/O are not held up for seconds.',
    }),
    livenessTtlMs: integer({
      env: 'AGENTQ_LIVENESS_TTL_MS',
      min: 300,
      default: 3000,
      doc: 'How long a proof of life lasts: a killed worker’s claims on paid work lapse within it, and its job locks are released one beat later.',
      when: 'At least twice `AGENTQ_LIVENESS_INTERVAL_MS`.',
    }),
    paidClaimMs: integer({
      env: 'AGENTQ_PAID_CLAIM_MS',
      min: 1000,
      default: 600_000,
      doc: 'The longest a claim on a paid call holds when its node has no `timeoutMs` (a hung call cannot block its step forever).',
    }),
    paidClaimTakeoverMs: integer({
      env: 'AGENTQ_PAID_CLAIM_TAKEOVER_MS',
      min: 0,
      max: 3_600_000,
      default: 0,
      doc: 'How long after a silent owner’s liveness lapsed (`AGENTQ_LIVENESS_TTL_MS`) another delivery takes over its claim on a paid call: 0 resumes a dead worker’s steps fastest, but a worker paused that long (SIGSTOP, a frozen VM) has its in-flight calls paid twice.',
      when: 'To pay nothing twice for pauses up to P seconds, set it to at least P − 3 s; every crashed worker’s paid steps then wait that much longer.',
    }),
    redisFaultDelayMs: integer({
      env: 'AGENTQ_REDIS_FAULT_DELAY_MS',
      min: 50,
      max: 60_000,
      default: 1000,
      doc: 'A step or intake job that meets a Redis fault (`OOM`, `READONLY`, `LOADING`, `MASTERDOWN`, connection lost) is retried after this, without spending an attempt.',
    }),
    maxJobBytes: integer({
      env: 'AGENTQ_MAX_JOB_BYTES',
      min: 1024,
      max: 1024 * 1024 * 1024,
      default: 1024 * 1024,
      shownDefault: '`1048576` (1 MiB)',
      doc: 'Raw intake jobs whose data is larger are failed without being read: `INVALID_INPUT` naming the size and the limit, the input not stored, the failed job keeping a small stand-in.',
      when: 'Send large content as documents and refer to them rather than raising it.',
    }),
    warnIntervalMs: integer({
      env: 'AGENTQ_WARN_INTERVAL_MS',
      min: 0,
      default: 10_000,
      doc: 'A repeated warning is logged once per kind per interval, then once with `repeated: n`; 0 = every line.',
    }),
    maxStalledCount: integer({
      env: 'AGENTQ_MAX_STALLED_COUNT',
      min: 1,
      default: 10,
      doc: 'Stalls before BullMQ fails a job (the reconciler then re-enqueues it).',
    }),
    reconcileIntervalMs: integer({
      env: 'AGENTQ_RECONCILE_INTERVAL_MS',
      min: 100,
      default: 10_000,
      doc: 'How often one worker sweeps for runs without a live job.',
    }),
    childRunParkMs: integer({
      env: 'AGENTQ_CHILD_RUN_PARK_MS',
      min: 1000,
      default: 60_000,
      doc: 'A step waiting for its child runs (`context.runGraph`) looks at them again after this long even if nobody woke it (a wake-up lost with a killed worker); it normally wakes as soon as the last of them ends.',
    }),
    reconcileAfterMs: integer({
      env: 'AGENTQ_RECONCILE_AFTER_MS',
      min: 100,
      default: 30_000,
      doc: 'A run untouched this long is checked by the sweep.',
    }),
    reconcileReindexKeys: integer({
      env: 'AGENTQ_RECONCILE_REINDEX_KEYS',
      min: 0,
      default: 1000,
      doc: "Keys each sweep scans for runs missing from their tenant's run list, which it puts back (one SCAN pass, resumed at the next sweep); 0: off.",
    }),
    shutdownGraceMs: integer({
      env: 'AGENTQ_SHUTDOWN_GRACE_MS',
      min: 0,
      default: 25_000,
      doc: 'On SIGTERM, active steps get this long before they are released.',
      when: 'Keep it below your orchestrator’s kill timeout (Kubernetes: 30 s).',
    }),
    shutdownReleaseMs: integer({
      env: 'AGENTQ_SHUTDOWN_RELEASE_MS',
      min: 0,
      max: 60_000,
      default: 5000,
      doc: 'After the shutdown grace, how long a stopping worker, API or `agentq start` tries to release what it holds; then it exits anyway, naming what it left in its last log line.',
      when: 'Keep grace + release below your orchestrator’s kill timeout.',
    }),
    keepCompletedJobs: integer({
      env: 'AGENTQ_KEEP_COMPLETED_JOBS',
      min: 0,
      default: 1000,
      doc: 'Completed step jobs kept for the dashboard.',
    }),
    keepFailedJobs: integer({
      env: 'AGENTQ_KEEP_FAILED_JOBS',
      min: 0,
      default: 5000,
      doc: 'Failed step jobs kept for the dashboard.',
    }),
    queueEventsMaxLen: integer({
      env: 'AGENTQ_QUEUE_EVENTS_MAXLEN',
      min: 10,
      default: 1000,
      doc: 'Events kept in each BullMQ queue’s event stream (BullMQ’s own default, 10,000, is about 1 MB per queue).',
    }),
    allowUnsafeRedis: flag({
      env: 'AGENTQ_ALLOW_UNSAFE_REDIS',
      default: false,
      doc: 'Start in production despite AOF off or an evicting policy.',
    }),
    localRedisPort: integer({
      env: 'AGENTQ_LOCAL_REDIS_PORT',
      min: 1,
      max: 65_535,
      default: 6379,
      doc: '`agentq start` without `REDIS_URL`: the local Redis port to use, or to start a private one on.',
    }),
    graphHeartbeatMs: integer({
      env: 'AGENTQ_GRAPH_HEARTBEAT_MS',
      min: 100,
      default: 5000,
      doc: 'Each worker re-announces the graphs it serves this often; an entry unseen for 3× this is ignored.',
    }),
    unservedGraphWaitMs: integer({
      env: 'AGENTQ_UNSERVED_GRAPH_WAIT_MS',
      min: 0,
      default: 60_000,
      doc: 'A run of a graph no live worker serves (queued with `queueUnserved`, or a raw job) waits this long for one, then fails with `UNKNOWN_GRAPH`.',
    }),
  },
  configOf: ({ nodeEnv, ...values }) => {
    checkLocks(values);
    return { ...values, production: nodeEnv === 'production' };
  },
});

export type WorkerConfig = AreaConfig<typeof workerArea>;

/** The lock settings' rules: refused at start, with the setting to change named. */
function checkLocks({
  lockDurationMs,
  takeLockMs,
  livenessIntervalMs,
  livenessTtlMs,
}: Pick<WorkerConfig, 'lockDurationMs' | 'takeLockMs' | 'livenessIntervalMs' | 'livenessTtlMs'>): void {
  if (lockDurationMs < 2 * livenessIntervalMs) {
    throw new AgentqError(
      'INVALID_INPUT',
      `invalid configuration: AGENTQ_LOCK_DURATION_MS (${lockDurationMs}) must be at least twice AGENTQ_LIVENESS_INTERVAL_MS (${livenessIntervalMs}): the liveness thread renews held jobs' locks at that interval`,
    );
  }
  if (takeLockMs < lockDurationMs) {
    throw new AgentqError(
      'INVALID_INPUT',
      `invalid configuration: AGENTQ_TAKE_LOCK_MS (${takeLockMs}) must be at least AGENTQ_LOCK_DURATION_MS (${lockDurationMs}): a step job's first lock must last until the liveness thread holds it`,
    );
  }
  if (livenessTtlMs < 2 * livenessIntervalMs) {
    throw new AgentqError(
      'INVALID_INPUT',
      `invalid configuration: AGENTQ_LIVENESS_TTL_MS (${livenessTtlMs}) must be at least twice AGENTQ_LIVENESS_INTERVAL_MS (${livenessIntervalMs}), or one late beat would declare a live worker dead`,
    );
  }
}
