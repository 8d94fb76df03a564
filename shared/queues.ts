/** Queue names (no `:` allowed by BullMQ). Producers of raw jobs add to INTAKE_QUEUE. */
export const INTAKE_QUEUE = 'agentq-runs';
/** Every step of every run is one job here. */
export const STEP_QUEUE = 'agentq-steps';
/** Webhook deliveries: one job per finished run that named a `webhookUrl`, retried with backoff. */
export const WEBHOOK_QUEUE = 'agentq-webhooks';
/** BullMQ's own default key prefix, used unless AGENTQ_QUEUE_PREFIX is set. */
export const DEFAULT_QUEUE_PREFIX = 'bull';
