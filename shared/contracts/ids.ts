import { createHash, randomBytes } from 'node:crypto';

/**
 * Run ids and idempotency keys: 1-128 characters of [A-Za-z0-9_.-] (docs/reference/job-schema-v1.md). No `:` (BullMQ
 * job ids).
 */
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

/**
 * The namespace of the run ids agentq derives: every id it makes starts with one of these — `run_`
 * (random, idempotency key, a tenant's client-chosen name, schedule tick, raw job) or `bat_` (a batch's
 * questions, `<batchId>.i<n>`). A client-chosen run id may not (RESERVED_RUN_ID_MESSAGE), so no client
 * can take an id agentq will derive later, however it guesses the derivation.
 */
const DERIVED_RUN_ID_PREFIXES = ['run_', 'bat_'] as const;

/** True when `id` is in agentq's own namespace (DERIVED_RUN_ID_PREFIXES); decided on the string alone. */
export function isDerivedRunId(id: string): boolean {
  return DERIVED_RUN_ID_PREFIXES.some((prefix) => id.startsWith(prefix));
}

/** Why a client may not choose `id`: what every entry point (API, client, CLI, raw job) answers. */
export function reservedRunIdMessage(id: string): string {
  const prefix = DERIVED_RUN_ID_PREFIXES.find((candidate) => id.startsWith(candidate)) ?? '';
  return `runId '${id}' starts with '${prefix}', a prefix reserved for the run ids agentq makes (${DERIVED_RUN_ID_PREFIXES.join(', ')}); choose a runId without it, or send an idempotencyKey instead`;
}

/**
 * The stored id of a run a non-default tenant named `name` (its client-chosen runId over the HTTP API).
 * Scoped by tenant so two tenants' equal names never meet: a POST can then never find another tenant's
 * run, and so can never tell that one exists.
 */
function runIdForClientName(tenant: string, name: string): string {
  const digest = createHash('sha256').update('runId\0').update(tenant).update('\0').update(name).digest('hex');
  return `run_c${digest.slice(0, 31)}`;
}

/**
 * The stored run id that `id` means for `tenant`: ids agentq derived (its namespace, isDerivedRunId —
 * a batch's questions included) are used as they are, and readers then check the run's tenant; a
 * client-chosen name is the id itself for the default tenant (single-tenant deployments keep their ids)
 * and scoped for every other tenant. Depends on the strings only, never on what exists.
 */
export function tenantRunId(tenant: string, id: string): string {
  return tenant === DEFAULT_TENANT || isDerivedRunId(id) ? id : runIdForClientName(tenant, id);
}

/**
 * The run a schedule's tick starts: one id per (tenant, schedule, tick time), so a tick job that runs
 * twice (its worker died mid-way and BullMQ handed it on) finds the run its first attempt created.
 */
export function runIdForScheduleTick(tenant: string, scheduleId: string, tickAt: number): string {
  const digest = createHash('sha256')
    .update('schedule\0')
    .update(tenant)
    .update('\0')
    .update(scheduleId)
    .update('\0')
    .update(String(tickAt))
    .digest('hex');
  return `run_s${digest.slice(0, 31)}`;
}

const CHILD_RUN_ID_PREFIX = 'run_p';

/**
 * The run a parent's step starts with `runGraph` (`key`: the call's idempotency key, else its place among
 * the step's calls). Deterministic, so a step run again after a crash finds the child its first attempt
 * created instead of starting a second one. `run_p`: the hook that ends a run knows a child by its id alone.
 */
export function runIdForChild(parentRunId: string, stepId: string, key: string): string {
  const digest = createHash('sha256')
    .update('child\0')
    .update(parentRunId)
    .update('\0')
    .update(stepId)
    .update('\0')
    .update(key)
    .digest('hex');
  return `${CHILD_RUN_ID_PREFIX}${digest.slice(0, 31)}`;
}

/** True for a batch question's run (`<batchId>.i<n>`, BatchDispatcher): only those free a batch's slot as they end. */
export function isBatchRunId(id: string): boolean {
  return /^bat_[^.]+\.i\d+$/.test(id);
}

/** True for a run some parent's step started (runIdForChild): only those have a parent to wake. */
export function isChildRunId(id: string): boolean {
  return id.startsWith(CHILD_RUN_ID_PREFIX);
}

export function newScheduleId(): string {
  return `sch_${randomBytes(12).toString('hex')}`;
}
