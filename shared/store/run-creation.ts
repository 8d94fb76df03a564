import { AgentqError } from '../contracts/errors.js';
import type { Message } from '../contracts/run-record.js';
import type { Task } from '../graph/graph.js';
import { forgetScripts, runScriptSha } from '../redis/create-redis.js';
import { parseRun, type BeginResult } from './begin-reply.js';
import { pairsToObject, parseMeta, type RunMeta } from './run-meta.js';
import { ADMIT_RUN, CREATE_RUN, REPLACE_INPUT } from './run-scripts.js';
import type { RunStoreContext } from './run-store-context.js';
import type { NewRun, StartJob } from './run-store-types.js';
import { slotPipeline } from './slot-pipeline.js';
import { CREATE_RUN_AND_START } from './step-transition-scripts.js';
import { fairArgs } from './fair-queue.js';

/** The run store's first two moves on a run: creating it (with its start job) and taking it in. */
export class RunCreation {
  constructor(private readonly context: RunStoreContext) {}

  /**
   * Creates the run unless its id is taken (→ the existing run). With `start`, the run's start job is
   * added in the same script (and again for an existing run never taken in): one round trip per enqueue.
   * `taken`: the start job as BullMQ's fetch replies, when `start.take` took it (a run created now).
   */
  async create(
    run: NewRun,
    start?: StartJob,
    retried = false,
  ): Promise<{ created: boolean; meta: RunMeta; taken?: unknown[] }> {
    const fields: Record<string, string | number> = {
      id: run.id,
      tenant: run.tenant,
      status: 'queued',
      graph: run.graph,
      superstep: 0,
      stepCount: 0,
      input: JSON.stringify(run.input ?? null),
      maxSteps: run.maxSteps,
      createdAt: run.now,
      updatedAt: run.now,
    };
    if (run.graphVersion) fields.graphVersion = run.graphVersion;
    if (run.deadlineAt) fields.deadlineAt = run.deadlineAt;
    if (run.tokenBudget) fields.tokenBudget = run.tokenBudget;
    if (run.idempotencyKey) fields.idempotencyKey = run.idempotencyKey;
    if (run.webhookUrl) fields.webhookUrl = run.webhookUrl;
    if (run.batchId) fields.batchId = run.batchId;
    if (run.scheduleId) fields.scheduleId = run.scheduleId;
    if (run.conversationId) fields.conversationId = run.conversationId;
    if (run.onBusy) fields.onBusy = run.onBusy;
    if (run.concurrency) fields.concurrency = JSON.stringify(run.concurrency);
    if (run.priority) fields.priority = run.priority;
    if (run.replay) fields.replay = JSON.stringify(run.replay);
    if (run.parent) {
      fields.parentRunId = run.parent.runId;
      fields.parentStep = run.parent.step;
      if (run.parent.wait) fields.parentWaits = '1';
      if (run.parent.span) fields.parentSpan = run.parent.span;
    }
    // Every script that stores the run's bytes charges them to this ledger, in the same call.
    fields.ledger = this.context.keys.runLedger(run.tenant, run.id);
    // Decided once per run: its scripts read these two fields to keep (or not) its recording.
    const { recording } = this.context;
    if (recording.mode !== 'off') {
      fields.record = recording.mode;
      fields.recordMax = recording.maxBytes;
    }
    // One round trip. The active index comes first: a crash after it leaves an index entry without a
    // run, which readers skip and the reconciler drops. The run's script touches only the run's shard
    // (its keys and its step queue, one Cluster slot); the indexes are global keys written beside it, by
    // commands of their own (on a Cluster, one pipeline per slot, sent at once).
    const script = await runScriptSha(this.context.redis, start ? CREATE_RUN_AND_START : CREATE_RUN);
    const pairs = Object.entries(fields).flat();
    const runKeys = this.context.keys.runAll(run.id);
    const pipeline = slotPipeline(this.context.redis)
      .zadd(this.context.keys.activeRuns(), 'NX', run.now, run.id)
      .evalsha(
        script,
        runKeys.length + (start?.queueKeys.length ?? 0),
        ...runKeys,
        ...(start
          ? [
              ...start.queueKeys,
              start.queuePrefix,
              start.jobId,
              start.name,
              JSON.stringify(start.data),
              start.attempts,
              run.now,
              run.priority ?? 0,
              ...fairArgs(start.fair),
              start.take?.token ?? '',
              start.take?.lockDurationMs ?? 0,
              start.take?.workerName ?? '',
              ...pairs,
            ]
          : pairs),
      )
      // In the same round trip, so no crash can leave a created run out of its tenant's list. When the id
      // was already taken by another tenant's run, list() skips that foreign entry (it checks meta.tenant).
      .zadd(this.context.keys.tenantRuns(run.tenant), 'NX', run.now, run.id)
      .sadd(this.context.keys.tenants(), run.tenant);
    if (run.conversationId) {
      // The turn takes its place in its conversation as it is created (ConversationTurns), so
      // turns run in the order they were created, whichever worker takes which in first.
      const turns = this.context.keys.conversationTurns(run.tenant, run.conversationId);
      pipeline.zadd(turns, 'NX', run.now, run.id).expire(turns, this.context.retentionSeconds * 2);
    }
    const replies = await pipeline.exec();
    const [, createReply] = replies ?? [];
    if (createReply?.[0] instanceof Error && createReply[0].message.includes('NOSCRIPT') && !retried) {
      // Redis restarted and lost its script cache since we loaded the script.
      forgetScripts(this.context.redis);
      return this.create(run, start, true);
    }
    if (createReply?.[0]) throw createReply[0];
    // Created: the meta is what was written (with the start job when it was taken). Taken: the script
    // returned the existing run's meta.
    const reply = createReply?.[1] as number | unknown[] | undefined;
    const taken = Array.isArray(reply) && reply[0] === 1 ? (reply[1] as unknown[]) : undefined;
    if (reply === 1 || taken)
      return {
        created: true,
        meta: parseMeta(Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, String(value)]))),
        ...(taken ? { taken } : {}),
      };
    const existing = pairsToObject((reply as string[] | undefined) ?? []);
    if (!existing.id)
      throw new AgentqError('INTERNAL', `run ${run.id} vanished right after it was created`, { retryable: true });
    return { created: false, meta: parseMeta(existing) };
  }

  /** A debounced run's input replaced by a later request's; → 'replaced', 'started' (or finished) or 'missing'. */
  async replacePendingInput(runId: string, input: unknown, now: number): Promise<'replaced' | 'started' | 'missing'> {
    const reply = await this.context.script<number>(REPLACE_INPUT, runId, [JSON.stringify(input ?? null), now]);
    return reply === 1 ? 'replaced' : reply === 0 ? 'started' : 'missing';
  }

  /**
   * Initial state, the first tasks and the messages the history starts with (a conversation's earlier
   * turns), in one script; → `admitted`: 'ok', 'admitted' (before), 'missing', or the status it has.
   * `start`: a start job's task, begun in the same script when the run is taken in now (`started`, as BEGIN).
   */
  async admit(
    runId: string,
    graphVersion: string,
    state: Record<string, unknown>,
    tasks: Task[],
    now: number,
    runTrace = '',
    messages: readonly Message[] = [],
    start?: { task: number; data: Record<string, unknown> },
  ): Promise<{ admitted: string; started?: Extract<BeginResult, { kind: 'run' }> }> {
    const pairs = Object.entries(state).flatMap(([key, value]) => [key, JSON.stringify(value)]);
    const reply = await this.context.script<string | unknown[]>(ADMIT_RUN, runId, [
      now,
      graphVersion,
      JSON.stringify(tasks),
      runTrace,
      start ? start.task : '',
      this.context.eventsMaxLen,
      start ? JSON.stringify(start.data) : '',
      pairs.length / 2,
      ...pairs,
      messages.length,
      ...messages.map((message) => JSON.stringify(message)),
    ]);
    return typeof reply === 'string' ? { admitted: reply } : { admitted: 'ok', started: parseRun(reply) };
  }
}
