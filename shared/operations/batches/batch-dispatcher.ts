import { createHash, randomBytes } from 'node:crypto';
import type { RedisConnection } from '../../redis/connect-redis.js';
import { AgentqError, type ErrorCode, type ErrorRecord } from '../../contracts/errors.js';
import { formatZodError } from '../../contracts/job-schema.js';
import type { Keys } from '../../store/keys.js';
import { runScript } from '../../redis/create-redis.js';
import { slotPipeline } from '../../store/slot-pipeline.js';
import type { RedisRunStore } from '../../store/redis-run-store.js';
import { withinShare, type SlotOffer } from './slot-offer.js';
import type { RunEnqueuer } from '../runs/run-enqueuer.js';
import { isTerminal, type RunStatus } from '../../contracts/run-record.js';
import { CLAIM, CLAIM_DEFERRED, REOPEN } from './batch-scripts.js';
import { startSideBySide } from './side-by-side-starts.js';
import { readProviderBatchProgress } from './read-provider-batch-progress.js';
import type { ProviderBatchesCheck } from './check-provider-batches.js';
import { batchRunId, batchRunParts, fieldsOf, parseBatchMeta, type BatchMeta, type ClaimReply } from './batch-meta.js';
import { autopilotRecordOf, budgetStopError } from './autopilot-record.js';
import { BatchAutopilotPlanner, type AutopilotSettings } from './batch-autopilot.js';
import { releaseRun, recordUsageSample } from './batch-usage.js';
import { planSubmission } from './submission-plan.js';
import { readBatchProgress } from './batch-progress.js';
import { readBatchResults } from './batch-result-of.js';
import {
  batchRequestSchema,
  type BatchRecord,
  type BatchRequest,
  type BatchResult,
  type ParsedBatchRequest,
} from './batch-schema.js';

/** What TenantAdmission refuses with. */
const ADMISSION_REFUSALS = new Set<ErrorCode>(['RATE_LIMITED', 'STORAGE_BUDGET_EXCEEDED']);

interface BatchItem {
  id: string;
  question: string;
}

interface BatchDispatcherOptions {
  redis: RedisConnection;
  keys: Keys;
  store: RedisRunStore;
  enqueuer: RunEnqueuer;
  retentionSeconds: number;
  /**
   * Asked when a batch wants the provider's Batch API: whether the provider has one. Without
   * it, such a batch is refused. `fallback: 'live'` runs it live instead when the provider has none.
   */
  providerBatches?: ProviderBatchesCheck;
  /** Plans batches with a deadline or a budget; without it such a batch is refused. @default none */
  autopilot?: AutopilotSettings;
}

/**
 * Batch Q&A through the queue: one run per question, at most `concurrency` of a batch in flight, the
 * next dispatched whenever one finishes (workers call `onRunFinished`; the reconciler calls `repair`).
 * Run ids are `<batchId>.i<index>`, and a batch id comes from its idempotency key when it has one, so
 * submitting the same batch again answers nothing twice.
 */
export class BatchDispatcher {
  private readonly planner: BatchAutopilotPlanner | undefined;

  constructor(private readonly options: BatchDispatcherOptions) {
    this.planner = options.autopilot
      ? new BatchAutopilotPlanner({ redis: options.redis, keys: options.keys, settings: options.autopilot })
      : undefined;
  }

  async submit(
    request: BatchRequest,
    { tenant, idempotencyKey }: { tenant: string; idempotencyKey?: string },
  ): Promise<{ batch: BatchRecord; created: boolean }> {
    const parsed = batchRequestSchema.safeParse(request);
    if (!parsed.success)
      throw new AgentqError('INVALID_INPUT', `invalid batch: ${formatZodError(parsed.error)}`, {
        details: parsed.error.issues,
      });
    const batch: ParsedBatchRequest = parsed.data;
    const batchId = idempotencyKey
      ? `bat_k${createHash('sha256').update(tenant).update('\0').update(idempotencyKey).digest('hex').slice(0, 27)}`
      : `bat_${randomBytes(12).toString('hex')}`;
    const ids = new Set<string>();
    const items: BatchItem[] = batch.questions.map((question, index) => {
      const id = question.id ?? String(index + 1);
      if (ids.has(id))
        throw new AgentqError(
          'INVALID_INPUT',
          `invalid batch: questions.${index}.id '${id}' is used twice; ids must be unique`,
        );
      ids.add(id);
      return { id, question: question.question };
    });
    const { redis, keys } = this.options;
    const batchKeys = keys.batch(batchId);
    const now = Date.now();
    const { concurrency: asked, graph, priority, ...runOptions } = batch.options;
    // Before anything is written: a budget no mode fits is refused here, and nothing is created.
    // A run waiting on its provider batch holds no worker: every question may be in flight at once.
    const { mode, providerBatch, concurrency, autopilot } = await planSubmission(batch, {
      tenant,
      questions: items.length,
      now,
      ...(this.planner ? { planner: this.planner } : {}),
      ...(this.options.providerBatches ? { providerBatches: this.options.providerBatches } : {}),
    });
    const created = await redis.hsetnx(batchKeys.meta, 'id', batchId);
    if (created === 1) {
      await redis
        .multi()
        .hset(batchKeys.meta, {
          tenant,
          status: 'running',
          graph,
          collection: batch.collection,
          concurrency,
          priority,
          total: items.length,
          next: 0,
          options: JSON.stringify(batch.answerCache ? { ...runOptions, answer_cache: true } : runOptions),
          providerBatch: providerBatch ? 1 : 0,
          ...(mode ? { mode } : {}),
          ...(autopilot ? { autopilot: JSON.stringify(autopilot) } : {}),
          concurrencyAsked: asked === undefined ? 0 : 1,
          // Live and flex questions share a prompt prefix (graph, collection): one goes first to cache it.
          ...((mode ? mode !== 'batch' : !providerBatch) && items.length > 1 ? { warmup: 1 } : {}),
          // Finished runs are counted as they finish (RELEASE): progress reads only the runs in flight.
          countsDone: 1,
          createdAt: now,
          updatedAt: now,
        })
        .rpush(batchKeys.items, ...items.map((item) => JSON.stringify(item)))
        .exec();
      // The indexes are keys of their own (other Cluster slots than the batch's tag): written after the
      // batch, so an index entry always has a batch behind it. A crash in between leaves a batch the
      // reconciler does not top up; the client's retry (same idempotency key) tops it up below.
      await slotPipeline(redis)
        .zadd(keys.tenantBatches(tenant), now, batchId)
        .zadd(keys.activeBatches(), now, batchId)
        .exec();
    } else {
      const owner = await redis.hget(batchKeys.meta, 'tenant');
      if (owner !== tenant)
        throw new AgentqError('CONFLICT', `batch id ${batchId} is taken; use another idempotency key`);
    }
    await this.topUp(batchId);
    const record = await this.get(batchId);
    return { batch: record!, created: created === 1 };
  }

  private async meta(batchId: string): Promise<BatchMeta | null> {
    return parseBatchMeta(await this.options.redis.hgetall(this.options.keys.batch(batchId).meta));
  }

  /** Claims the batch's next item (CLAIM). */
  private claim(batchId: string): Promise<ClaimReply> {
    const batchKeys = this.options.keys.batch(batchId);
    return runScript<ClaimReply>(
      this.options.redis,
      CLAIM,
      [batchKeys.meta, batchKeys.inflight, batchKeys.items],
      [`${batchId}.i`, Date.now()],
    );
  }

  /**
   * Dispatches items while the batch has free slots and the tenant's admission takes them. An item the
   * admission refuses (the tenant's in-flight cap, its storage budget) stays claimed without a run, as
   * after a crash: `repair` (the reconciler, each sweep) starts it once there is room. `offer`: the first
   * item started takes its start job into that slot.
   */
  async topUp(batchId: string, claimed?: ClaimReply, offer?: SlotOffer): Promise<number> {
    const { redis, keys } = this.options;
    const batchKeys = keys.batch(batchId);
    let dispatched = 0;
    let meta: BatchMeta | null = null;
    for (;;) {
      const [index, item, fields, free] = claimed ?? (await this.claim(batchId));
      claimed = undefined;
      if (index === CLAIM_DEFERRED) {
        // Items the admission refused before go first; stop while it still refuses them.
        const started = await this.startDeferred(batchId);
        if (started < 0) break;
        dispatched += started;
        continue;
      }
      if (index < 0) break;
      meta ??= fields ? parseBatchMeta(fieldsOf(fields)) : await this.meta(batchId);
      if (!meta) break;
      const slot = offer && !offer.taken && withinShare(offer, meta.concurrency) ? offer : undefined;
      if (!(await this.start(meta, index, item, slot))) {
        await redis.hincrby(batchKeys.meta, 'deferred', 1);
        break;
      }
      dispatched += 1;
      // The claim filled the last free slot (or took the last item): another claim could only say so, and
      // on an eager start it would hold the next question's hand-off back by that round trip.
      if (free === 0) break;
      const batch = meta;
      const side = await startSideBySide(this.options, batch, (next, json) => this.start(batch, next, json));
      dispatched += side.started;
      if (side.stop) break;
    }
    return dispatched;
  }

  /** Starts the claimed items that have no run (refused before); → how many, or -1 when one is refused again. */
  private async startDeferred(batchId: string): Promise<number> {
    const { redis, keys } = this.options;
    const batchKeys = keys.batch(batchId);
    await redis.hset(batchKeys.meta, 'deferred', 0);
    const meta = await this.meta(batchId);
    if (!meta) return -1;
    const claimed = await redis.smembers(batchKeys.inflight);
    const pipeline = slotPipeline(redis);
    for (const runId of claimed) pipeline.exists(keys.run(runId).meta);
    const exists = (await pipeline.exec()) ?? [];
    let started = 0;
    for (const [position, runId] of claimed.entries()) {
      if (exists[position]?.[1] === 1) continue;
      if (!(await this.start(meta, batchRunParts(runId).index))) {
        await redis.hincrby(batchKeys.meta, 'deferred', 1);
        return -1;
      }
      started += 1;
    }
    return started;
  }

  /**
   * → false when the admission refused the item's run for now (it stays claimed, for `repair`). `item`: its
   * JSON, when the claim brought it. `offer`: the slot its start job is taken into (`offer.taken`).
   */
  private async start(meta: BatchMeta, index: number, item?: string, offer?: SlotOffer): Promise<boolean> {
    item ??= (await this.options.redis.lindex(this.options.keys.batch(meta.id).items, index)) ?? '{}';
    const { question } = JSON.parse(item) as BatchItem;
    const runId = batchRunId(meta.id, index);
    // Its budget stopped the batch: the question is not asked, and its run says why.
    if (meta.stopped) return this.failItem(meta, runId, budgetStopError(meta)).then(() => true);
    let enqueued;
    try {
      enqueued = await this.options.enqueuer.enqueue(
        {
          graph: meta.graph,
          tenant: meta.tenant,
          input: { query: question, collection: meta.collection, ...meta.options },
        },
        { runId, batchId: meta.id, priority: meta.priority, origin: 'batch', ...(offer ? { take: offer.slot } : {}) },
      );
    } catch (error) {
      if (!AgentqError.isInstance(error) || !ADMISSION_REFUSALS.has(error.code)) throw error;
      if (error.retryable) return false;
      // It can never fit (a question larger than the whole storage budget): the item fails with the reason.
      await this.failItem(meta, runId, error.toRecord());
      return true;
    }
    const { record, meta: run, taken } = enqueued;
    if (offer && taken) offer.taken = { job: taken, meta: run };
    // Already answered (a repaired or re-sent item): free its slot at once.
    if (isTerminal(record.status)) await this.onRunFinished(runId, meta.id, record.status);
    return true;
  }

  /** The item's run, failed with `error` (no input kept), and its slot freed. */
  private async failItem(meta: BatchMeta, runId: string, error: ErrorRecord): Promise<void> {
    const { store } = this.options;
    const now = Date.now();
    const { meta: run } = await store.creation.create({
      id: runId,
      tenant: meta.tenant,
      graph: meta.graph,
      input: null,
      maxSteps: 1,
      batchId: meta.id,
      now,
    });
    if (run.tenant === meta.tenant) await store.lifecycle.finish(runId, 'failed', error, now, { onlyFrom: 'queued' });
    await this.onRunFinished(runId, meta.id, 'failed');
  }

  /**
   * A run finished (`status`): count it, free its slot and claim the next item in one script, then fill
   * free slots. Workers call this for runs with a batchId; `offer`, the slot the run's last step left free
   * in the worker, takes the next question's start job (`offer.taken`); `usageFields`, the run's usage as
   * the commit that finished it read it (else it is read here).
   */
  async onRunFinished(
    runId: string,
    batchId: string,
    status: RunStatus,
    {
      offer,
      usageFields,
    }: { offer?: SlotOffer | undefined; usageFields?: readonly (string | null)[] | undefined } = {},
  ): Promise<void> {
    const { batchStatus, claimed, calls, batch, usage } = await releaseRun(this.options, {
      runId,
      batchId,
      status,
      usageFields,
    });
    // A completed question's sample for the autopilot goes beside the next question's start, not before it.
    await Promise.all([
      recordUsageSample(this.planner, { status, usage, calls, batch }),
      batchStatus === 'completed'
        ? this.finish(batchId)
        : batchStatus === 'running'
          ? this.topUp(batchId, claimed, offer)
          : undefined,
    ]);
  }

  /** A finished run of the batch was retried in place: in flight again, no longer counted as finished. */
  async onRunRetried(runId: string, batchId: string): Promise<void> {
    const batchKeys = this.options.keys.batch(batchId);
    await runScript(this.options.redis, REOPEN, [batchKeys.meta, batchKeys.inflight, batchKeys.done], [runId]);
  }

  private async finish(batchId: string): Promise<void> {
    const { redis, keys, retentionSeconds } = this.options;
    const batchKeys = keys.batch(batchId);
    // The active index and the batch's keys are in different Cluster slots: not one MULTI (nothing reads them together).
    await slotPipeline(redis)
      .zrem(keys.activeBatches(), batchId)
      .expire(batchKeys.meta, retentionSeconds)
      .expire(batchKeys.items, retentionSeconds)
      .expire(batchKeys.done, retentionSeconds)
      .expire(batchKeys.usage, retentionSeconds)
      .expire(batchKeys.holds, retentionSeconds)
      .exec();
  }

  /** After a crash: enqueue claimed items that have no run, free slots of finished runs, top up. */
  async repair(batchId: string): Promise<void> {
    const meta = await this.meta(batchId);
    if (!meta || meta.status !== 'running') {
      await this.options.redis.zrem(this.options.keys.activeBatches(), batchId);
      return;
    }
    for (const runId of await this.options.redis.smembers(this.options.keys.batch(batchId).inflight)) {
      const run = await this.options.store.reads.get(runId);
      if (!run) await this.start(meta, batchRunParts(runId).index);
      else if (isTerminal(run.status)) await this.onRunFinished(runId, batchId, run.status);
    }
    await this.topUp(batchId);
  }

  activeBatchIds(): Promise<string[]> {
    return this.options.redis.zrange(this.options.keys.activeBatches(), '0', '-1');
  }

  /** Stops dispatching and cancels the runs in flight. */
  async cancel(batchId: string, cancelRun: (runId: string) => Promise<unknown>): Promise<BatchRecord | null> {
    const { redis, keys } = this.options;
    const batchKeys = keys.batch(batchId);
    const meta = await this.meta(batchId);
    if (!meta) return null;
    if (meta.status === 'running') {
      const now = Date.now();
      await redis.hset(batchKeys.meta, 'status', 'cancelled', 'finishedAt', now, 'updatedAt', now);
      for (const runId of await redis.smembers(batchKeys.inflight)) await cancelRun(runId).catch(() => undefined);
      await this.finish(batchId);
    }
    return this.get(batchId);
  }

  /** The batch with its progress; null when missing. */
  async get(batchId: string): Promise<BatchRecord | null> {
    const read = await readBatchProgress(this.options.redis, this.options.keys, batchId);
    if (!read) return null;
    const { meta, progress } = read;
    return {
      id: meta.id,
      tenant: meta.tenant,
      status: meta.status,
      graph: meta.graph,
      collection: meta.collection,
      concurrency: meta.concurrency,
      progress,
      ...(meta.providerBatch
        ? { providerBatch: await readProviderBatchProgress(this.options.redis, this.options.keys, meta.id) }
        : {}),
      usage: meta.usage,
      ...(meta.autopilot ? { autopilot: autopilotRecordOf(meta.autopilot, meta.stopped) } : {}),
      createdAt: new Date(meta.createdAt).toISOString(),
      updatedAt: new Date(meta.updatedAt).toISOString(),
      finishedAt: meta.finishedAt === null ? null : new Date(meta.finishedAt).toISOString(),
    };
  }

  /** The tenant of a batch (for the API's scoping), or null. */
  tenantOf(batchId: string): Promise<string | null> {
    return this.options.redis.hget(this.options.keys.batch(batchId).meta, 'tenant');
  }

  /** One result per question, in order; answers only for completed runs. */
  async results(batchId: string): Promise<BatchResult[] | null> {
    const meta = await this.meta(batchId);
    return meta ? readBatchResults(this.options, meta) : null;
  }
}
