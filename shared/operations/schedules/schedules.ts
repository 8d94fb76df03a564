import type { JobSchedulerTemplateOptions, Queue, RepeatOptions } from 'bullmq';
import { AgentqError } from '../../contracts/errors.js';
import { newScheduleId } from '../../contracts/ids.js';
import type { Keys } from '../../store/keys.js';
import type { RedisConnection } from '../../redis/connect-redis.js';
import {
  applySchedulePatch,
  MAX_SCHEDULES_PER_TENANT,
  parseScheduleSpec,
  type ScheduleSpec,
} from './schedule-schema.js';

/** A schedule as stored: its spec (without `paused`) and its state. */
interface ScheduleDefinition {
  id: string;
  tenant: string;
  spec: Omit<ScheduleSpec, 'paused'>;
  paused: boolean;
  createdAt: number;
  updatedAt: number;
  /** The API key (hash id) that created it: its ticks' runs are charged to that key's rate limit. */
  keyId?: string;
}

/** A schedule as users read it: the spec, its state, and its last and next runs. */
export type ScheduleRecord = Omit<ScheduleSpec, 'paused'> & {
  id: string;
  tenant: string;
  paused: boolean;
  createdAt: string;
  updatedAt: string;
  /** When the next tick starts a run; null while paused or after endAt. */
  nextRunAt: string | null;
  /** The run the latest tick started. */
  lastRun: ScheduledRun | null;
};

export interface ScheduledRun {
  runId: string;
  /** The tick's time: when the run was due (it starts then or, if no worker was up, when one is). */
  scheduledFor: string;
}

/** What a tick job carries: ids only; the worker reads the schedule's definition at the tick. */
export interface ScheduleTickData {
  v: 1;
  tenant: string;
  scheduleId: string;
}

/** Runs kept per schedule in its run list (newest first); older ones stay readable as runs. */
const RUNS_KEPT = 100;

const TICK_JOB_OPTIONS: JobSchedulerTemplateOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 1000 },
};

interface SchedulesOptions {
  redis: RedisConnection;
  keys: Keys;
  /** The schedules queue (SCHEDULES_QUEUE): one BullMQ job scheduler per schedule. */
  queue: Queue;
  /** Refuses a graph no live worker serves (UNKNOWN_GRAPH). */
  requireGraph?: (graph: string, graphVersion?: string) => Promise<void>;
}

/**
 * Scheduled runs, per tenant. The definition lives in the tenant's hash; the ticking is BullMQ's job
 * scheduler (one per unpaused schedule, same id), whose tick jobs have one id per tick time — so one
 * tick is one job however many workers and API processes run — and a tick's run id is derived from
 * (tenant, schedule, tick time), so a tick job that runs twice starts one run.
 */
export class Schedules {
  constructor(private readonly options: SchedulesOptions) {}

  /** `keyId`: the API key that asks (its ticks are charged to it); absent for trusted producers. */
  async create(
    tenant: string,
    input: unknown,
    { keyId, now = Date.now() }: { keyId?: string; now?: number } = {},
  ): Promise<ScheduleRecord> {
    const { redis, keys } = this.options;
    const { paused = false, ...spec } = parseScheduleSpec(input);
    await this.options.requireGraph?.(spec.graph, spec.graphVersion);
    const key = keys.schedules(tenant).definitions;
    if ((await redis.hlen(key)) >= MAX_SCHEDULES_PER_TENANT) {
      throw new AgentqError(
        'INVALID_INPUT',
        `tenant ${tenant} has ${MAX_SCHEDULES_PER_TENANT} schedules, the most it may have; delete schedules it no longer needs first`,
      );
    }
    const definition: ScheduleDefinition = {
      id: newScheduleId(),
      tenant,
      spec,
      paused,
      createdAt: now,
      updatedAt: now,
      ...(keyId === undefined ? {} : { keyId }),
    };
    await redis.hset(key, definition.id, JSON.stringify(definition));
    try {
      if (!paused) await this.arm(definition);
    } catch (error) {
      // Not armed: leave nothing behind that looks like a live schedule.
      await redis.hdel(key, definition.id).catch(() => undefined);
      throw error;
    }
    return this.describe(definition);
  }

  /** The tenant's schedules, oldest first. */
  async list(tenant: string): Promise<ScheduleRecord[]> {
    const all = await this.options.redis.hvals(this.options.keys.schedules(tenant).definitions);
    const definitions = all
      .map((text) => JSON.parse(text) as ScheduleDefinition)
      .sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    return Promise.all(definitions.map((definition) => this.describe(definition)));
  }

  /** One schedule of the tenant, or null (another tenant's schedule is null too: it does not exist here). */
  async get(tenant: string, scheduleId: string): Promise<ScheduleRecord | null> {
    const definition = await this.definition(tenant, scheduleId);
    return definition ? this.describe(definition) : null;
  }

  async definition(tenant: string, scheduleId: string): Promise<ScheduleDefinition | null> {
    const text = await this.options.redis.hget(this.options.keys.schedules(tenant).definitions, scheduleId);
    return text ? (JSON.parse(text) as ScheduleDefinition) : null;
  }

  /**
   * Changes a schedule (fields as in create; `null` clears an optional one; `paused` pauses or resumes).
   * The definition is written first, then the BullMQ scheduler follows it: a tick between the two reads
   * the new definition.
   */
  async update(tenant: string, scheduleId: string, patch: unknown, now = Date.now()): Promise<ScheduleRecord | null> {
    const current = await this.definition(tenant, scheduleId);
    if (!current) return null;
    const { paused = false, ...spec } = parseScheduleSpec(
      applySchedulePatch({ ...current.spec, paused: current.paused }, patch),
    );
    if (spec.graph !== current.spec.graph || spec.graphVersion !== current.spec.graphVersion)
      await this.options.requireGraph?.(spec.graph, spec.graphVersion);
    const next: ScheduleDefinition = { ...current, spec, paused, updatedAt: now };
    await this.options.redis.hset(this.options.keys.schedules(tenant).definitions, scheduleId, JSON.stringify(next));
    if (paused) await this.options.queue.removeJobScheduler(scheduleId);
    else if (current.paused || timingOf(current.spec) !== timingOf(spec)) await this.arm(next);
    return this.describe(next);
  }

  /** Deletes a schedule and stops its ticks; → false when the tenant has no such schedule. Its runs stay. */
  async delete(tenant: string, scheduleId: string): Promise<boolean> {
    const { redis, keys, queue } = this.options;
    if (!(await this.definition(tenant, scheduleId))) return false;
    await queue.removeJobScheduler(scheduleId);
    await redis
      .multi()
      .hdel(keys.schedules(tenant).definitions, scheduleId)
      .del(keys.schedules(tenant).runs(scheduleId))
      .exec();
    return true;
  }

  /** The runs the schedule's ticks started, newest first (at most the last 100). */
  async runs(tenant: string, scheduleId: string, limit = RUNS_KEPT): Promise<ScheduledRun[]> {
    const flat = await this.options.redis.zrevrange(
      this.options.keys.schedules(tenant).runs(scheduleId),
      0,
      limit - 1,
      'WITHSCORES',
    );
    const runs: ScheduledRun[] = [];
    for (let i = 0; i < flat.length; i += 2)
      runs.push({ runId: flat[i]!, scheduledFor: new Date(Number(flat[i + 1])).toISOString() });
    return runs;
  }

  /** Notes that the tick at `tickAt` started `runId` (idempotent: a tick is one member). */
  async recordTick(tenant: string, scheduleId: string, runId: string, tickAt: number): Promise<void> {
    const key = this.options.keys.schedules(tenant).runs(scheduleId);
    await this.options.redis
      .multi()
      .zadd(key, tickAt, runId)
      .zremrangebyrank(key, 0, -(RUNS_KEPT + 1))
      .exec();
  }

  /** Creates or replaces the schedule's BullMQ job scheduler from its definition. */
  private async arm(definition: ScheduleDefinition): Promise<void> {
    const { spec } = definition;
    const repeat: Omit<RepeatOptions, 'key'> = {
      ...(spec.cron === undefined
        ? { every: spec.everyMs! }
        : { pattern: spec.cron, ...(spec.tz ? { tz: spec.tz } : { tz: 'UTC' }) }),
      ...(spec.startAt ? { startDate: Date.parse(spec.startAt) } : {}),
      ...(spec.endAt ? { endDate: Date.parse(spec.endAt) } : {}),
    };
    const data: ScheduleTickData = { v: 1, tenant: definition.tenant, scheduleId: definition.id };
    await this.options.queue.upsertJobScheduler(definition.id, repeat, { name: 'tick', data, opts: TICK_JOB_OPTIONS });
  }

  private async describe(definition: ScheduleDefinition): Promise<ScheduleRecord> {
    const [scheduler, last] = await Promise.all([
      definition.paused ? null : this.options.queue.getJobScheduler(definition.id),
      this.runs(definition.tenant, definition.id, 1),
    ]);
    const next = scheduler?.next;
    const ended = definition.spec.endAt !== undefined && next !== undefined && next > Date.parse(definition.spec.endAt);
    return {
      id: definition.id,
      tenant: definition.tenant,
      ...definition.spec,
      paused: definition.paused,
      createdAt: new Date(definition.createdAt).toISOString(),
      updatedAt: new Date(definition.updatedAt).toISOString(),
      nextRunAt: next !== undefined && !ended ? new Date(next).toISOString() : null,
      lastRun: last[0] ?? null,
    };
  }
}

/** The fields that decide when ticks fall: a change to any re-arms the BullMQ scheduler. */
function timingOf(spec: Omit<ScheduleSpec, 'paused'>): string {
  return JSON.stringify([
    spec.cron ?? null,
    spec.tz ?? null,
    spec.everyMs ?? null,
    spec.startAt ?? null,
    spec.endAt ?? null,
  ]);
}

/** The tick time of a tick job (`repeat:<schedulerId>:<ms>`, BullMQ's job scheduler ids), or undefined. */
export function tickTimeOf(jobId: string | undefined): number | undefined {
  const match = /^repeat:.+:(\d+)$/.exec(jobId ?? '');
  return match ? Number(match[1]) : undefined;
}
