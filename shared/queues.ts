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
/** BullMQ's own default key prefix, used unless AGENTQ_QUEUE_PREFIX is set. */
export const DEFAULT_QUEUE_PREFIX = 'bull';
