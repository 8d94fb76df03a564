import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { runScript } from '../../shared/redis/create-redis.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import {
  FINISHED_PROVIDER_BATCH_STATUSES,
  type ProviderBatch,
  type ProviderBatchResult,
  type ProviderBatches,
  type ProviderBatchStatus,
} from '../../shared/ports/provider-batches.js';
import type { Keys } from '../../shared/store/keys.js';
import type { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { Telemetry } from '../../shared/telemetry/telemetry.js';
import { batchResultsVerdicts, type VerdictContext } from './batch-results-verdicts.js';
import { parseFlushRecord, type FlushRecord } from '../../shared/operations/batches/provider-batch-flush-record.js';
import type { ParkedStepWaker } from './parked-step-waker.js';
import { parseCallId } from './provider-batch-call.js';
import { MARK_CALLS } from './provider-batch-scripts.js';
import { emitProviderBatchSpan, emitWaitSpans } from './provider-batch-spans.js';
import { createOnce } from './provider-batch-create.js';

/** Points of a flush's life where a test may kill the worker (chaos tests), each after the named provider call. */
export type FlushPoint = 'intent' | 'uploaded' | 'created' | 'polled' | 'downloaded' | 'applied' | 'marked' | 'done';

/** The longest wait between two polls while the provider is unreachable. */
const MAX_POLL_DELAY_MS = 600_000;

interface FlushDriverOptions {
  redis: RedisConnection;
  keys: Keys;
  store: RedisRunStore;
  api: ProviderBatches;
  waker: ParkedStepWaker;
  logger: Logger;
  telemetry: Telemetry;
  pollMs: number;
  /** How long a finished batch's results (or a batch the provider refuses to show) are asked for again (AGENTQ_PROVIDER_BATCH_RESULTS_WAIT_MS). */
  resultsWaitMs: number;
  verdicts: Omit<VerdictContext, 'batchCancelled' | 'redis' | 'keys'>;
  /** The tenant budgets a batch's answers are counted against (the live calls' own), when any. */
  tenantBudget?: Pick<TenantBudget, 'settle'>;
  /** Still the collector? Checked right before a provider batch is created (a lapsed lease must not create twice). */
  holdsLease: () => Promise<boolean>;
  /** Redis's time (RedisClock), not this machine's: every time a flush records is read again by other workers. */
  now: () => number;
  onPoint?: (point: FlushPoint, flushId: string) => void | Promise<void>;
}

/**
 * Moves one flush along its states, each move written right after the provider call it records, so a
 * worker killed anywhere leaves a state another resumes from without a second provider batch: the file
 * is looked for by name before a second upload, and the batch by its metadata before a create.
 */
export class FlushDriver {
  constructor(private readonly options: FlushDriverOptions) {}

  async read(batchId: string, flushId: string): Promise<FlushRecord | undefined> {
    return parseFlushRecord(await this.options.redis.hgetall(this.options.keys.providerBatch(batchId).flush(flushId)));
  }

  /** One move (or a few, while nothing waits on the provider); `cancelled`: the agentq batch was cancelled. */
  async advance(batchId: string, flushId: string, cancelled: boolean): Promise<void> {
    for (let moves = 0; moves < 6; moves += 1) {
      const flush = await this.read(batchId, flushId);
      if (!flush || flush.state === 'done') return;
      const before = flush.state;
      await this.step(batchId, flush, cancelled);
      const after = await this.read(batchId, flushId);
      if (!after || after.state === before) return;
    }
  }

  private async step(batchId: string, flush: FlushRecord, cancelled: boolean): Promise<void> {
    const key = this.options.keys.providerBatch(batchId).flush(flush.id);
    const { redis } = this.options;
    const now = this.options.now();
    switch (flush.state) {
      case 'intent':
      case 'uploaded':
        return this.send(batchId, flush, cancelled);
      case 'created':
        return this.poll(batchId, flush, cancelled);
      case 'finished':
        return this.apply(batchId, flush, cancelled);
      case 'marked': {
        await this.options.waker.wake(flush.ids);
        await redis.hset(key, 'state', 'done', 'finishedAt', now, 'updatedAt', now);
        emitProviderBatchSpan(this.options.telemetry, this.options.api.provider, batchId, {
          ...flush,
          finishedAt: now,
        });
        await this.point('done', flush.id);
        return;
      }
    }
  }

  /**
   * Upload, then create: a provider that fails for a while is asked again later and later; one that
   * refuses (a 4xx: no Batch API, a file or model it does not take) settles the flush's requests with its
   * reason — or sends them live, for a provider without a Batch API and AGENTQ_PROVIDER_BATCH_FALLBACK=live
   * — so no run waits on a provider batch that will never exist.
   */
  private async send(batchId: string, flush: FlushRecord, cancelled: boolean): Promise<void> {
    if (this.options.now() < flush.nextPollAt) return;
    try {
      await this.sendStep(batchId, flush, cancelled);
    } catch (error) {
      const key = this.options.keys.providerBatch(batchId).flush(flush.id);
      const now = this.options.now();
      if (!AgentqError.isInstance(error) || error.retryable) {
        const delay = Math.min(MAX_POLL_DELAY_MS, Math.max(this.options.pollMs, flush.pollDelayMs) * 2);
        this.options.logger.warn(
          { batchId, flush: flush.id, err: String(error), retryInMs: delay },
          `provider batch: ${flush.state === 'intent' ? 'upload' : 'create'} failed; trying again`,
        );
        await this.options.redis.hset(key, 'pollDelayMs', delay, 'nextPollAt', now + delay, 'updatedAt', now);
        return;
      }
      const unsupported = (error.details as { status?: number } | undefined)?.status === 404;
      const verdict =
        unsupported && this.options.verdicts.fallback === 'live'
          ? { s: 'live' }
          : {
              s: 'error',
              e: {
                code: 'PROVIDER_ERROR',
                message: `the provider refused the provider batch of this model call: ${error.message}`,
                retryable: false,
                details: error.details,
              },
            };
      this.options.logger.warn(
        { batchId, flush: flush.id, err: error.message },
        'provider batch: refused by the provider',
      );
      await this.options.redis.hset(key, 'status', 'refused', 'errors', JSON.stringify([error.message]));
      await this.mark(batchId, flush, verdict);
    }
  }

  private async sendStep(batchId: string, flush: FlushRecord, cancelled: boolean): Promise<void> {
    const key = this.options.keys.providerBatch(batchId).flush(flush.id);
    const { redis, api } = this.options;
    const now = this.options.now();
    switch (flush.state) {
      case 'intent': {
        if (cancelled) return this.settle(batchId, flush, 'cancelled before its provider batch was created');
        const filename = `agentq-${flush.id}.jsonl`;
        await redis.hincrby(key, 'uploads', 1);
        // A second upload of the same intent (its worker died after the first): use the first file.
        const found = flush.uploads > 0 ? await api.findUpload(filename) : undefined;
        const fileId = found ?? (await api.upload(filename, await this.fileOf(batchId, flush)));
        await this.point('uploaded', flush.id);
        await redis.hset(key, 'fileId', fileId, 'state', 'uploaded', 'updatedAt', this.options.now());
        return;
      }
      case 'uploaded': {
        const created = () => this.point('created', flush.id);
        const batch = await createOnce({ ...this.options, created }, batchId, flush, cancelled);
        if (batch === 'settle') return this.settle(batchId, flush, 'cancelled before its provider batch was created');
        if (!batch) return;
        await this.record(key, batch, {
          state: 'created',
          nextPollAt: now + this.options.pollMs,
          pollDelayMs: this.options.pollMs,
        });
        return;
      }
    }
  }

  private async poll(batchId: string, flush: FlushRecord, cancelled: boolean): Promise<void> {
    const key = this.options.keys.providerBatch(batchId).flush(flush.id);
    const now = this.options.now();
    if (
      cancelled &&
      !flush.cancelRequested &&
      !FINISHED_PROVIDER_BATCH_STATUSES.has(flush.status as ProviderBatchStatus)
    ) {
      // Cancelling the agentq batch cancels its provider batches (what the provider answered stays saved).
      await this.options.api
        .cancel(flush.batchId!)
        .catch((error: unknown) =>
          this.options.logger.warn(
            { batchId, providerBatch: flush.batchId, err: String(error) },
            'provider batch: cancel failed; it runs to its end',
          ),
        );
      await this.options.redis.hset(key, 'cancelRequested', 1);
    }
    if (now < flush.nextPollAt) return;
    let batch: ProviderBatch;
    try {
      batch = await this.options.api.retrieve(flush.batchId!);
    } catch (error) {
      if (AgentqError.isInstance(error) && !error.retryable) {
        // A refusal (404, 403, 406…) is not the provider saying the batch ended: asked again until the bound,
        // then its requests fail — not sent again, since the provider may have answered them.
        if (!(await this.givenUp(key, flush, error, 'poll'))) return;
        await this.options.redis.hset(
          key,
          'state',
          'finished',
          'status',
          'lost',
          'errors',
          JSON.stringify([error.message]),
          'updatedAt',
          now,
        );
        return;
      }
      // The provider unreachable: keep polling, less often.
      const delay = Math.min(MAX_POLL_DELAY_MS, Math.max(this.options.pollMs, flush.pollDelayMs) * 2);
      this.options.logger.warn(
        { batchId, providerBatch: flush.batchId, err: String(error), nextPollMs: delay },
        'provider batch: poll failed; backing off',
      );
      await this.options.redis.hset(key, 'pollDelayMs', delay, 'nextPollAt', now + delay, 'updatedAt', now);
      return;
    }
    await this.point('polled', flush.id);
    if (flush.failingSince !== undefined) await this.options.redis.hdel(key, 'failingSince', 'downloads');
    const finished = FINISHED_PROVIDER_BATCH_STATUSES.has(batch.status);
    await this.record(key, batch, {
      ...(finished ? { state: 'finished' } : {}),
      nextPollAt: now + this.options.pollMs,
      pollDelayMs: this.options.pollMs,
    });
  }

  private async apply(batchId: string, flush: FlushRecord, cancelled: boolean): Promise<void> {
    const { redis, keys, api } = this.options;
    const key = keys.providerBatch(batchId).flush(flush.id);
    if (this.options.now() < flush.nextPollAt && flush.downloads > 0) return;
    const results: ProviderBatchResult[] = [];
    const problems: string[] = [];
    try {
      for (const fileId of [flush.outputFileId, flush.errorFileId]) {
        if (!fileId) continue;
        const file = await api.download(fileId);
        results.push(...file.results);
        problems.push(...file.problems.map(({ line, problem }) => `file ${fileId} line ${line}: ${problem}`));
      }
    } catch (error) {
      // Whatever the failure (a 4xx too): the provider batch ended and holds the answers, maybe paid for.
      if (!(await this.givenUp(key, flush, error, 'download'))) return;
      const reason = `its results could not be downloaded in ${flush.downloads + 1} tries over ${Math.round((this.options.now() - (flush.failingSince ?? this.options.now())) / 1000)} s (AGENTQ_PROVIDER_BATCH_RESULTS_WAIT_MS): ${(error as Error).message}`;
      await redis.hset(key, 'errors', JSON.stringify([reason]));
      flush = { ...flush, status: 'unreadable', errors: [reason] };
      results.length = 0;
    }
    await this.point('downloaded', flush.id);
    const bodies = keys.providerBatch(batchId).bodies;
    const { verdicts, usage, saved } = await batchResultsVerdicts(
      { ...this.options.verdicts, redis, keys, batchCancelled: cancelled, ...(await this.spendCounter(batchId)) },
      flush,
      results,
      problems,
      async (customId) => (await redis.hget(bodies, customId)) ?? undefined,
    );
    if (problems.length > 0)
      this.options.logger.warn(
        { batchId, providerBatch: flush.batchId, problems: problems.slice(0, 5) },
        'provider batch: results lines not used',
      );
    await this.point('applied', flush.id);
    if (this.options.telemetry.enabled) await emitWaitSpans(this.options, batchId, flush, saved);
    await redis.hset(key, 'usage', JSON.stringify(usage), 'problems', JSON.stringify(problems.slice(0, 20)));
    const batchKeys = keys.providerBatch(batchId);
    await runScript(
      redis,
      MARK_CALLS,
      [batchKeys.calls, batchKeys.pending, batchKeys.bodies, key],
      [JSON.stringify(verdicts), this.options.now(), 'marked'],
    );
    await this.point('marked', flush.id);
  }

  /**
   * After a failed download or a refused poll: → true once AGENTQ_PROVIDER_BATCH_RESULTS_WAIT_MS have passed
   * since the first failure; until then the next try is set, the delay doubling from twice the poll
   * interval (up to 10 min), the last one at the bound.
   */
  private async givenUp(key: string, flush: FlushRecord, error: unknown, what: 'download' | 'poll'): Promise<boolean> {
    const now = this.options.now();
    const since = flush.failingSince ?? now;
    if (now - since >= this.options.resultsWaitMs) return true;
    const tries = flush.downloads + 1;
    const nextAt = Math.min(
      now + Math.min(MAX_POLL_DELAY_MS, this.options.pollMs * 2 ** tries),
      since + this.options.resultsWaitMs,
    );
    this.options.logger.warn(
      { flush: flush.id, providerBatch: flush.batchId, err: String(error), tries, retryInMs: nextAt - now },
      `provider batch: ${what === 'download' ? 'results download' : 'poll'} failed; trying the same provider batch again`,
    );
    await this.options.redis.hset(
      key,
      'downloads',
      tries,
      'failingSince',
      since,
      'nextPollAt',
      nextAt,
      'updatedAt',
      now,
    );
    return false;
  }

  /** Counts answers against the batch's tenant's budgets, as a live call's spend is counted (once per call). */
  private async spendCounter(batchId: string): Promise<Pick<VerdictContext, 'countSpend'>> {
    const budget = this.options.tenantBudget;
    if (!budget) return {};
    const [tenant, graph] = await this.options.redis.hmget(this.options.keys.batch(batchId).meta, 'tenant', 'graph');
    if (!tenant) return {};
    return {
      countSpend: async (customId, answer, costUsd) => {
        const call = parseCallId(customId);
        if (!call) return;
        await budget
          .settle(tenant, undefined, {
            callId: `${call.runId}/${call.stepId}/${call.key}`,
            tokens: answer.usage.inputTokens + answer.usage.outputTokens,
            costUsd,
            graph: graph ?? 'unknown',
            model: answer.model,
          })
          .catch((error: unknown) =>
            this.options.logger.warn(
              { batchId, err: String(error) },
              'provider batch: could not count an answer against its tenant budget',
            ),
          );
      },
    };
  }

  /** A flush that never reached the provider: its requests fail with `reason` (the batch was cancelled). */
  private async settle(batchId: string, flush: FlushRecord, reason: string): Promise<void> {
    await this.mark(batchId, flush, {
      s: 'error',
      e: { code: 'CANCELLED', message: `the model call was not sent: ${reason}`, retryable: false },
    });
  }

  /** Every request of the flush gets `verdict`; the flush goes to 'marked' (its steps are woken next). */
  private async mark(batchId: string, flush: FlushRecord, verdict: Record<string, unknown>): Promise<void> {
    const batchKeys = this.options.keys.providerBatch(batchId);
    const verdicts = Object.fromEntries(flush.ids.map((id) => [id, verdict]));
    await runScript(
      this.options.redis,
      MARK_CALLS,
      [batchKeys.calls, batchKeys.pending, batchKeys.bodies, batchKeys.flush(flush.id)],
      [JSON.stringify(verdicts), this.options.now(), 'marked'],
    );
  }

  /** The JSON Lines file of a flush, from its requests' lines as they were parked. */
  private async fileOf(batchId: string, flush: FlushRecord): Promise<string> {
    const lines = await this.options.redis.hmget(this.options.keys.providerBatch(batchId).bodies, ...flush.ids);
    return lines.filter((line): line is string => line !== null).join('\n') + '\n';
  }

  private async record(key: string, batch: ProviderBatch, extra: Record<string, string | number>): Promise<void> {
    await this.options.redis.hset(key, {
      batchId: batch.id,
      status: batch.status,
      counts: JSON.stringify(batch.requestCounts),
      ...(batch.outputFileId ? { outputFileId: batch.outputFileId } : {}),
      ...(batch.errorFileId ? { errorFileId: batch.errorFileId } : {}),
      ...(batch.errors ? { errors: JSON.stringify(batch.errors) } : {}),
      updatedAt: this.options.now(),
      ...extra,
    });
  }

  private async point(
    point: Parameters<NonNullable<FlushDriverOptions['onPoint']>>[0],
    flushId: string,
  ): Promise<void> {
    await this.options.onPoint?.(point, flushId);
  }
}
