/** Queue names (no `:` allowed by BullMQ). Producers of raw jobs add to INTAKE_QUEUE. */
export const INTAKE_QUEUE = 'agentq-runs';
/** Every step of every run is one job here. */
export const STEP_QUEUE = 'agentq-steps';
/** Webhook deliveries: one job per finished run that named a `webhookUrl`, retried with backoff. */
export const WEBHOOK_QUEUE = 'agentq-webhooks';
/**
 * Document ingestion: one job per document (parse, chunk, index). Its own queue and BullMQ Worker, and
 * parsing runs in worker threads, so CPU-heavy documents never delay the lock renewal of step jobs.
 */
export const INGEST_QUEUE = 'agentq-ingest';
/**
 * Schedule ticks: one BullMQ job scheduler per schedule (upsertJobScheduler), so one tick job per tick
 * however many processes run; a worker turns each into the run it stands for (ids only in the job).
 */
export const SCHEDULES_QUEUE = 'agentq-schedules';
/**
 * Options every BullMQ Queue of agentq is made with. BullMQ keeps a per-queue event stream trimmed to
 * `maxLen` (its default is 10,000 events, about 1 MB per queue) and each Queue instance writes its own
 * value into the queue's meta when it starts, so all of them must pass the same one.
 */
export function queueStreamOptions(eventsMaxLen: number): { streams: { events: { maxLen: number } } } {
  return { streams: { events: { maxLen: eventsMaxLen } } };
}
/** BullMQ's own default key prefix, used unless AGENTQ_QUEUE_PREFIX is set. */
export const DEFAULT_QUEUE_PREFIX = 'bull';
/**
 * The run store's own key prefix (shared/store/keys.ts builds every key under it), used unless
 * AGENTQ_KEY_PREFIX is set. It sits here, beside BullMQ's, so the settings can name it without standing on
 * the store.
 */
export const DEFAULT_KEY_PREFIX = 'agentq';
