import { trace } from '@opentelemetry/api';
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { StepAbort } from '../../shared/contracts/abort.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { START_NODE, type StepJobData } from '../../shared/contracts/job-schema.js';
import type { Usage } from '../../shared/contracts/run-record.js';
import type { CompiledNode } from '../../shared/graph/graph.js';
import { InterruptSignal } from '../../shared/graph/interrupt-signal.js';
import { ParkSignal } from '../../shared/graph/park-signal.js';
import type { RedisRunStore, StepMeta } from '../../shared/store/redis-run-store.js';
import { CANCELLED_ERROR as CANCELLED } from '../../shared/store/run-scripts.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { StepOutcome, StepProcessorOptions } from './step-processor-options.js';
import { parksStep } from './redis-fault-park.js';
import { attemptError, retriesAfter } from './attempt-failure.js';
import { interruptCallback } from './waits/interrupt-callback.js';

/** One attempt of a step whose node threw, and what it threw. */
interface StepFailure {
  job: Job<StepJobData>;
  token: string | undefined;
  meta: StepMeta;
  node: CompiledNode;
  /** The attempt that failed (1 = the first). */
  attempt: number;
  thrown: unknown;
  logger: Logger;
  /** What the attempt spent before it threw: counted only when the run fails here. */
  usage: Usage;
}

/** A step whose node threw: an interrupt, an abort, a parked or retried attempt, or the run failed. */
export async function handleStepFailure(options: StepProcessorOptions, failure: StepFailure): Promise<StepOutcome> {
  const { job, token, meta, node, attempt, thrown, logger, usage } = failure;
  const { store } = options;
  const { runId, superstep } = job.data;
  if (thrown instanceof InterruptSignal) {
    const stepId = `s${superstep}.t${job.data.task}`;
    const { callback } = thrown;
    const secret = options.callbacks?.secret;
    // The node context refused a callback without a secret: here one is always there when asked for.
    const handedOut =
      callback && secret
        ? await interruptCallback({
            store,
            runId,
            tenant: meta.tenant,
            stepId,
            timeoutMs: callback.timeoutMs,
            signing: { ...options.callbacks!, secret },
          })
        : {};
    const recorded = await store.lifecycle.interrupt(
      runId,
      superstep,
      { node: node.name, stepId, request: thrown.request, ...handedOut },
      Date.now(),
    );
    // A cancel that landed after the node asked, before this record: its abort found the node done, and the
    // client left the run to this worker (its job is active), so the step ends it here.
    if (
      recorded === 'fenced' &&
      (await store.lifecycle.finish(runId, 'cancelled', CANCELLED, Date.now(), {
        superstep,
        onlyFrom: 'cancelling',
      })) === 'ok'
    ) {
      logger.info('step interrupted while the run was being cancelled: the run is cancelled');
      return 'cancelled';
    }
    logger.info('step interrupted: the run waits for input');
    return 'waiting';
  }
  // A Redis fault (full, gone) goes up to `process`, which parks the step without spending an attempt.
  if (parksStep(thrown)) throw thrown;
  if (thrown instanceof ParkSignal) {
    // The step waits holding no worker slot and no lock; whoever has its answer promotes the
    // job, and the delay (never past the run's deadline) is only the bound on a lost wake-up.
    const delayMs =
      meta.deadlineAt === null
        ? thrown.delayMs
        : Math.max(0, Math.min(thrown.delayMs, meta.deadlineAt - Date.now() + 1));
    await store.eventLog.addEvent(runId, 'step-parked', {
      node: node.name,
      superstep,
      task: job.data.task,
      attempt,
      parkedMs: delayMs,
      waitingOn: thrown.waitingOn,
    });
    logger.debug({ waitingOn: thrown.waitingOn, delayMs }, 'step parked: it waits without a worker');
    trace.getActiveSpan()?.addEvent('agentq.step.parked', {
      'agentq.park.waiting_on': JSON.stringify(thrown.waitingOn),
      'agentq.park.ms': delayMs,
    });
    await job.moveToDelayed(Date.now() + delayMs, token);
    await wakeIfArrived(thrown, job, logger);
    throw new DelayedError();
  }
  const abort = thrown instanceof StepAbort ? thrown : undefined;
  if (abort?.kind === 'stale') {
    // Another delivery committed this step while this one ran: nothing to do, no attempt spent.
    logger.info('step committed by another delivery; this one ends without paying again');
    return 'stale';
  }
  if (abort?.kind === 'cancel') {
    await store.lifecycle.finish(runId, 'cancelled', CANCELLED, Date.now(), { superstep });
    return 'cancelled';
  }
  if (abort?.kind === 'shutdown') {
    // Release the step to another worker without spending an attempt.
    logger.info('worker shutting down: step released');
    await job.moveToDelayed(Date.now(), token);
    throw new DelayedError();
  }
  const error = attemptError(thrown);
  if (error.retryAfterMs !== undefined && error.retryable) {
    // The provider said when to come back (429 Retry-After): park the step without spending an attempt.
    logger.warn(
      { code: error.code, retryAfterMs: error.retryAfterMs },
      'step parked until the provider allows another request',
    );
    await store.eventLog.addEvent(runId, 'step-retry', {
      node: node.name,
      superstep,
      attempt,
      parkedMs: error.retryAfterMs,
      error: error.toRecord(),
    });
    await job.moveToDelayed(Date.now() + error.retryAfterMs, token);
    throw new DelayedError();
  }
  // A start job's attempts were set before its node was known: the fewer of the two counts.
  if (retriesAfter(node, error, attempt, job.opts.attempts)) {
    logger.warn({ err: error.message, code: error.code, ...causeOf(error) }, 'step failed; it will be retried');
    await store.eventLog.addEvent(runId, 'step-retry', {
      node: node.name,
      superstep,
      attempt,
      error: error.toRecord(),
    });
    // So BullMQ's backoff (worker settings) finds the node's policy for the next attempt.
    if (job.data.node === START_NODE) await job.updateData({ ...job.data, node: node.name });
    throw error; // BullMQ retries it with the node's backoff
  }
  logger.error({ err: error.message, code: error.code, ...causeOf(error) }, 'step failed; the run fails');
  // A retried attempt re-reads its memoised responses and records their usage again; only a step that
  // ends the run here has its usage counted outside a commit.
  if (usage.inputTokens + usage.outputTokens > 0) await store.commits.addUsage(runId, usage);
  return failRun(options.store, meta, superstep, error, node.name, attempt);
}

/** A parked step whose answer came while it parked: promoted now rather than after its delay. */
async function wakeIfArrived(signal: ParkSignal, job: Job<StepJobData>, logger: Logger): Promise<void> {
  if (!signal.arrived) return;
  try {
    if (await signal.arrived()) await job.promote();
  } catch (error) {
    // Woken meanwhile by whoever had the answer (no longer delayed): the delay stays the bound either way.
    logger.debug({ err: String(error) }, 'a parked step moved before its own wake-up');
  }
}

/** Fails the run (context kept), then the job too, so Bull Board shows where it ended. */
export async function failRun(
  store: RedisRunStore,
  meta: StepMeta,
  superstep: number,
  error: AgentqError,
  node: string,
  attempt: number,
): Promise<never> {
  await store.lifecycle.finish(meta.id, 'failed', { ...error.toRecord(), node, attempt }, Date.now(), {
    superstep,
  });
  throw new UnrecoverableError(`${error.code}: ${error.message}`);
}

/**
 * What the error's causes say, for the operator's log only: a run's error message stays fit for its tenant
 * (the model server's address, say, is in a cause, not in the message).
 */
function causeOf(error: Error): { cause?: string } {
  const messages: string[] = [];
  for (let cause = error.cause; cause instanceof Error && messages.length < 3; cause = cause.cause)
    messages.push(cause.message);
  return messages.length === 0 ? {} : { cause: messages.join(' ← ') };
}
