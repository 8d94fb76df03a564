import { createHash, randomBytes } from 'node:crypto';

/** Run ids and idempotency keys: 1-128 characters of [A-Za-z0-9_.-] (DESIGN §4). No `:` (BullMQ job ids). */
export const ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;

export const DEFAULT_TENANT = 'default';

export function newRunId(): string {
  return `run_${randomBytes(12).toString('hex')}`;
}

/**
 * The run id an idempotency key stands for. Scoped by tenant, so two tenants' equal keys never collide,
 * and deterministic, so a retried enqueue finds the run the first one created.
 */
export function runIdForIdempotencyKey(tenant: string, key: string): string {
  const digest = createHash('sha256').update(tenant).update('\0').update(key).digest('hex');
  return `run_k${digest.slice(0, 31)}`;
}
