import { randomUUID } from 'node:crypto';
import { AgentqError } from '../../contracts/errors.js';
import type { WaitEvent, WaitOutcome } from '../../contracts/wait-event.js';
import { stepJobId } from '../../contracts/job-schema.js';
import type { RedisConnection } from '../../redis/connect-redis.js';
import { runScript } from '../../redis/create-redis.js';
import { luaScript } from '../../redis/lua-script.js';
import type { Keys } from '../keys.js';
import type { StepQueues } from '../step-queues.js';

/** Fixes a wait's end at its first call. Its KEYS, ARGV and reply: the header of lua/fix-until-1.lua. */
const FIX_UNTIL = luaScript(new URL('./lua/fix-until-1.lua', import.meta.url));
/** A step's wait: its outcome, an event sent before, a timeout, or opened. The header of lua/watch-run-3.lua. */
const WATCH_RUN = luaScript(new URL('./lua/watch-run-3.lua', import.meta.url));
/** Delivers an event to one run, once. The header of lua/deliver-run-3.lua. */
const DELIVER_RUN = luaScript(new URL('./lua/deliver-run-3.lua', import.meta.url));
/** A wait enters a correlation key's index and reads its recent events. The header of lua/watch-key-2.lua. */
const WATCH_KEY = luaScript(new URL('./lua/watch-key-2.lua', import.meta.url));
/** An event sent to a correlation key: kept, and answered with the open waits. The header of lua/send-key-2.lua. */
const SEND_KEY = luaScript(new URL('./lua/send-key-2.lua', import.meta.url));

/** Runs an event to a correlation key is delivered to at once. */
const DELIVERIES_AT_ONCE = 32;

/** An open wait, as the run's waits hash keeps it. */
export interface WaitRecord {
  name: string;
  /** Fields the event's `data` must have, with these values. */
  match: Record<string, unknown>;
  /** The correlation key it also listens on, or null (events sent to the run only). */
  key: string | null;
  /** When it times out (ms), or null: never (the run's deadline still ends it). */
  until: number | null;
}

/** An event to send: to one run, or to every run waiting on a correlation key of the tenant. */
export interface SendEventInput {
  tenant: string;
  runId?: string;
  key?: string;
  name: string;
  data?: unknown;
  /** How long the event is kept for waits still to come (ms; 0 keeps nothing). */
  windowMs: number;
}

/** What a send did: the runs it woke, and whether it is kept for waits still to come. */
export interface SendEventResult {
  eventId: string;
  /** Waiting runs it reached now (each at most once). */
  reached: number;
  /** Kept (until `expiresAt`) for a wait that comes later. */
  stored: boolean;
  expiresAt: string | null;
}

/** A wait's id within its run: the step's id and the wait's rank in the node (`s3.t0:0`). */
export function waitIdOf(stepId: string, rank: number): string {
  return `${stepId}:${rank}`;
}

/** The wait an interrupt's callback URL answers: the step's id and `i` (`s3.t0:i`), apart from its node's waits. */
export function interruptWaitId(stepId: string): string {
  return `${stepId}:i`;
}

/** The step whose interrupt a callback's wait id names, or null: the wait of a node's `context.callback`. */
export function interruptStepOf(waitId: string): string | null {
  return waitId.endsWith(':i') ? waitId.slice(0, -2) : null;
}

/**
 * Durable waits of runs (`context.sleep`, `context.waitFor`) and the events that end them. A run's waits
 * and inbox sit on its hash tag; a correlation key's index and events on a tag of their own, so each
 * script touches one Cluster slot. The delivery to a run is recorded there, once, by one script; the
 * step is then promoted (its job leaves the delayed set), and a woken step reads the recorded outcome.
 */
export class RunWaits {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    /** How long a run's waits outlive their end (the run's retention). */
    private readonly retentionSeconds: number,
  ) {}

  /** The end of wait `waitId`, fixed at its first call: `proposed` then, the first call's since. */
  async fixUntil(runId: string, waitId: string, proposed: number): Promise<number> {
    const fixed = await runScript<string>(
      this.redis,
      FIX_UNTIL,
      [this.keys.runWaits(runId).waits],
      [waitId, proposed, this.holdMs(proposed)],
    );
    return Number(fixed);
  }

  /** The wait's outcome when it has one (taken now from the run's inbox or the key's events), else 'waiting'. */
  async watch(runId: string, waitId: string, record: WaitRecord, tenant: string): Promise<WaitOutcome | 'waiting'> {
    const now = Date.now();
    const { waits, inbox } = this.keys.runWaits(runId);
    const reply = await runScript<string[]>(
      this.redis,
      WATCH_RUN,
      [this.keys.runMeta(runId), waits, inbox],
      [waitId, JSON.stringify(record), now, this.holdMs(record.until ?? now)],
    );
    if (reply[0] === 'missing') throw new AgentqError('NOT_FOUND', `run ${runId} not found (it may have expired)`);
    if (reply[0] === 'done') return JSON.parse(reply[1]!) as WaitOutcome;
    if (record.key === null) return 'waiting';
    const keyKeys = this.keys.eventKey(tenant, record.key);
    const sent = await runScript<string[]>(
      this.redis,
      WATCH_KEY,
      [keyKeys.waiters, keyKeys.buffer],
      [`${runId} ${waitId}`, record.until ?? '+inf', now, this.holdMs(record.until ?? now)],
    );
    for (const raw of sent) {
      const result = await this.deliver(runId, raw, { waitId });
      if (result[0] === 'delivered') return this.outcome(runId, waitId).then((outcome) => outcome ?? 'waiting');
    }
    return 'waiting';
  }

  /** The recorded outcome of a wait, or null while it is open. */
  async outcome(runId: string, waitId: string): Promise<WaitOutcome | null> {
    const held = await this.redis.hget(this.keys.runWaits(runId).waits, `d:${waitId}`);
    return held === null ? null : (JSON.parse(held) as WaitOutcome);
  }

  /** Sends an event; each run it reaches has its waiting step promoted by `queues`. */
  async send(input: SendEventInput, queues: StepQueues): Promise<SendEventResult> {
    const { tenant, runId, key, name, data = null, windowMs } = input;
    if ((runId === undefined) === (key === undefined))
      throw new AgentqError('INVALID_INPUT', 'an event goes to a run (runId) or to a correlation key (key): give one');
    const now = Date.now();
    const event: WaitEvent = { id: `ev_${randomUUID()}`, name, data, sentAt: new Date(now).toISOString() };
    const expiresAt = windowMs > 0 ? now + windowMs : null;
    const sent =
      runId !== undefined
        ? await this.sendToRun(runId, event, expiresAt, queues)
        : await this.sendToKey(tenant, key!, event, expiresAt, queues);
    return { eventId: event.id, ...sent, expiresAt: sent.stored ? new Date(expiresAt!).toISOString() : null };
  }

  /**
   * Completes the open wait `waitId` of the run with `event` (a callback's POST), once; its step is then
   * promoted. → 'delivered'; 'used' (the wait has its outcome already); 'closed' (the run is over, or the
   * wait is not open); 'missing' (no such run).
   */
  async complete(
    runId: string,
    waitId: string,
    event: WaitEvent,
    queues: StepQueues,
  ): Promise<'delivered' | 'used' | 'closed' | 'missing'> {
    const [result] = await this.deliver(runId, JSON.stringify(event), { waitId });
    if (result === 'delivered') {
      await wakeWaitingStep(queues, runId, waitId);
      return 'delivered';
    }
    if (result === 'missing') return 'missing';
    return result === 'taken' || (await this.outcome(runId, waitId)) !== null ? 'used' : 'closed';
  }

  private async sendToRun(
    runId: string,
    event: WaitEvent,
    expiresAt: number | null,
    queues: StepQueues,
  ): Promise<{ reached: number; stored: boolean }> {
    const [result, waitId] = await this.deliver(runId, JSON.stringify(event), { expiresAt });
    if (result === 'missing') throw new AgentqError('NOT_FOUND', `run ${runId} not found (it may have expired)`);
    if (result !== 'delivered') return { reached: 0, stored: result === 'stored' };
    await wakeWaitingStep(queues, runId, waitId!);
    return { reached: 1, stored: false };
  }

  private async sendToKey(
    tenant: string,
    key: string,
    event: WaitEvent,
    expiresAt: number | null,
    queues: StepQueues,
  ): Promise<{ reached: number; stored: boolean }> {
    const raw = JSON.stringify({ ...event, key });
    const { waiters, buffer } = this.keys.eventKey(tenant, key);
    const members = await runScript<string[]>(
      this.redis,
      SEND_KEY,
      [waiters, buffer],
      [raw, Date.now(), expiresAt ?? ''],
    );
    let reached = 0;
    // A few runs at a time: one key may hold thousands of waits, each a script on its run's tag and a promote.
    for (let from = 0; from < members.length; from += DELIVERIES_AT_ONCE)
      await Promise.all(
        members.slice(from, from + DELIVERIES_AT_ONCE).map(async (member) => {
          const [waiterRun, waitId] = member.split(' ') as [string, string];
          const [result] = await this.deliver(waiterRun, raw, { waitId });
          if (result === 'delivered') {
            reached += 1;
            await wakeWaitingStep(queues, waiterRun, waitId);
          }
          // The wait has its outcome (this event's or another's), or its run is over: it leaves the index.
          if (result !== 'none') await this.redis.zrem(waiters, member);
        }),
      );
    return { reached, stored: expiresAt !== null };
  }

  private deliver(
    runId: string,
    raw: string,
    { waitId = '', expiresAt = null }: { waitId?: string; expiresAt?: number | null },
  ): Promise<string[]> {
    const now = Date.now();
    const { waits, inbox } = this.keys.runWaits(runId);
    return runScript<string[]>(
      this.redis,
      DELIVER_RUN,
      [this.keys.runMeta(runId), waits, inbox],
      [raw, now, waitId, expiresAt ?? '', this.holdMs(expiresAt ?? now)],
    );
  }

  /** How long a run's waits hash is kept at least: past `until`, the run's retention. */
  private holdMs(until: number): number {
    return Math.max(0, until - Date.now()) + this.retentionSeconds * 1000;
  }
}

/**
 * Promotes the step of wait `waitId` out of the delayed set (BullMQ's public `Job.promote`). → whether it
 * was parked: a step still active (between its look and its park) looks again once parked
 * (`ParkSignal.arrived`), so nothing is lost.
 */
export async function wakeWaitingStep(queues: StepQueues, runId: string, waitId: string): Promise<boolean> {
  const step = /^s(\d+)\.t(\d+):/.exec(waitId);
  if (!step) return false;
  const job = await queues.forRun(runId).getJob(stepJobId(runId, Number(step[1]), Number(step[2])));
  if (!job || (await job.getState()) !== 'delayed') return false;
  return job.promote().then(
    () => true,
    // Moved meanwhile (woken by its own delay, or taken): nothing to do.
    () => false,
  );
}
