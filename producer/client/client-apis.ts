import type { ScheduledRun, ScheduleRecord } from '../../shared/operations/schedules/schedules.js';
import type { UsagePeriod } from '../../shared/operations/limits/tenant-budget.js';
import type { TenantBudgetLimits } from '../../shared/config/tenant-budget-limits.js';
import type { BatchRecord, BatchRequest, BatchResult } from '../../shared/operations/batches/batch-schema.js';

// The AgentClient's sub-APIs (`client.batches`, `client.schedules`, `client.budgets`).

/** Batch Q&A: one run per question (see `BatchDispatcher`). */
export interface BatchesApi {
  submit(
    request: BatchRequest,
    options?: { idempotencyKey?: string; tenant?: string },
  ): Promise<{ batch: BatchRecord; created: boolean }>;
  get(batchId: string): Promise<BatchRecord | null>;
  results(batchId: string): Promise<BatchResult[] | null>;
  cancel(batchId: string): Promise<BatchRecord | null>;
}

/**
 * Scheduled runs, per tenant (default: the client's). `create` takes `{graph, input, cron, tz?}` or
 * `{graph, input, everyMs}` (optional startAt/endAt, options, priority, name, paused); `update` takes any
 * of those fields (`null` clears an optional one, `paused` pauses or resumes). Another tenant's schedule
 * reads as null (not found).
 */
export interface SchedulesApi {
  /** `keyId`: the API key that asks (the HTTP API), charged for every tick's run. */
  create(spec: unknown, options?: { tenant?: string; keyId?: string }): Promise<ScheduleRecord>;
  list(options?: { tenant?: string }): Promise<ScheduleRecord[]>;
  get(scheduleId: string, options?: { tenant?: string }): Promise<ScheduleRecord | null>;
  update(scheduleId: string, patch: unknown, options?: { tenant?: string }): Promise<ScheduleRecord | null>;
  pause(scheduleId: string, options?: { tenant?: string }): Promise<ScheduleRecord | null>;
  resume(scheduleId: string, options?: { tenant?: string }): Promise<ScheduleRecord | null>;
  delete(scheduleId: string, options?: { tenant?: string }): Promise<boolean>;
  /** The runs its ticks started, newest first (the last 100). */
  runs(scheduleId: string, options?: { tenant?: string }): Promise<ScheduledRun[] | null>;
}

/** Tenant budgets (default tenant: the client's): limits per UTC day and month, and the spend against them. */
export interface BudgetsApi {
  getLimits(options?: {
    tenant?: string;
  }): Promise<{ tenant: string; limits: TenantBudgetLimits; source: 'tenant' | 'defaults' }>;
  /** Replaces the tenant's limits (`tokensPerDay`, `tokensPerMonth`, `costUsdPerDay`, `costUsdPerMonth`); INVALID_INPUT names a bad field. */
  setLimits(limits: unknown, options?: { tenant?: string }): Promise<{ tenant: string; limits: TenantBudgetLimits }>;
  usage(options?: {
    tenant?: string;
    days?: number;
  }): Promise<{ tenant: string; days: UsagePeriod[]; month: UsagePeriod }>;
}

/** An event for `AgentClient.sendEvent`: to a run or to a correlation key (one of the two). */
export interface SendEventRequest {
  runId?: string;
  key?: string;
  name: string;
  data?: unknown;
  /** The tenant whose key it is. @default the client's */
  tenant?: string;
}
