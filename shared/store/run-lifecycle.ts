import { AgentqError, type ErrorRecord } from '../contracts/errors.js';
import type { PendingInterrupt, RunStatus } from '../contracts/run-record.js';
import type { Task } from '../graph/graph.js';
import { CANCELLED_ERROR, FINISH_RUN, INTERRUPT_RUN, REQUEST_CANCEL, RESUME_RUN, RETRY_RUN } from './run-scripts.js';
import { runScript } from '../redis/create-redis.js';
import type { RunReads } from './run-reads.js';
import type { RunStoreContext } from './run-store-context.js';

/** A run's moves outside its steps: fail or cancel, cancel on request, retry, wait for input, resume. */
export class RunLifecycle {
  constructor(
    private readonly context: RunStoreContext,
    private readonly reads: RunReads,
  ) {}

  /**
   * Fail or cancel a run that has not finished, keeping its last committed context.
   * `superstep` fences the change to a step's own superstep; `onlyFrom` to a status.
   */
  async finish(
    runId: string,
    status: 'failed' | 'cancelled',
    error: ErrorRecord,
    now: number,
    { superstep, onlyFrom }: { superstep?: number; onlyFrom?: RunStatus } = {},
  ): Promise<'ok' | 'missing' | 'terminal' | 'fenced'> {
    const result = await this.context.script<'ok' | 'missing' | 'terminal' | 'fenced'>(FINISH_RUN, runId, [
      superstep ?? '',
      status,
      JSON.stringify(error),
      now,
      this.context.eventsMaxLen,
      this.context.retentionSeconds,
      JSON.stringify({ status, error }),
      onlyFrom ?? '',
    ]);
    if (result === 'ok') await this.context.finished(runId, status);
    else if (result === 'terminal' || result === 'missing')
      await this.context.redis.zrem(this.context.keys.activeRuns(), runId);
    return result;
  }

  /** → the status after the request ('cancelled' at once when no step was in flight), or 'missing'. */
  async requestCancel(runId: string, now: number): Promise<RunStatus | 'missing'> {
    return (await this.cancelRequest(runId, now)).status;
  }

  /**
   * `requestCancel`, saying whether this request changed the run (`changed`): false when it was finished,
   * already cancelling or gone, so that two racing cancellations of a run count it once.
   */
  async cancelRequest(runId: string, now: number): Promise<{ status: RunStatus | 'missing'; changed: boolean }> {
    const [status, changed] = await this.context.script<[RunStatus | 'missing', number]>(REQUEST_CANCEL, runId, [
      now,
      this.context.eventsMaxLen,
      this.context.retentionSeconds,
      JSON.stringify(CANCELLED_ERROR),
      JSON.stringify({ status: 'cancelled', error: CANCELLED_ERROR }),
    ]);
    if (status === 'cancelled') await this.context.finished(runId, 'cancelled');
    if (status === 'cancelling') await this.context.redis.publish(this.context.keys.cancelChannel(), runId);
    return { status, changed: changed === 1 };
  }

  /** `failedAt`: retry only the failure that ended then (a bulk retry's match), not a later one. */
  async retry(runId: string, now: number, failedAt?: number): Promise<{ superstep: number; tasks: Task[] }> {
    const meta = await this.reads.get(runId);
    if (meta) await this.context.redis.zadd(this.context.keys.activeRuns(), 'NX', meta.createdAt, runId);
    const reply = await this.context.script<string[]>(RETRY_RUN, runId, [
      now,
      this.context.eventsMaxLen,
      failedAt ?? '',
    ]);
    switch (reply[0]) {
      case 'ok':
        return { superstep: Number(reply[1]), tasks: JSON.parse(reply[2]!) as Task[] };
      case 'missing':
        throw new AgentqError('NOT_FOUND', `run ${runId} not found (it may have expired)`);
      case 'no-tasks':
        await this.context.redis.zrem(this.context.keys.activeRuns(), runId);
        throw new AgentqError(
          'CONFLICT',
          `run ${runId} failed before its first step (its input was rejected); enqueue a corrected run instead`,
        );
      default: {
        // Only a finished run leaves the active index: a run another retry just started is active.
        const status = reply[1] ?? '';
        if (status === 'completed' || status === 'cancelled')
          await this.context.redis.zrem(this.context.keys.activeRuns(), runId);
        if (status === 'retried since' || status === 'failed')
          throw new AgentqError(
            'CONFLICT',
            `run ${runId} was retried since it failed at ${failedAt === undefined ? '?' : new Date(failedAt).toISOString()}; it is not retried again`,
          );
        throw new AgentqError('CONFLICT', `run ${runId} is ${status}; only a failed run can be retried`);
      }
    }
  }

  /** The step asked for input: the run waits. → 'ok' | 'missing' | 'fenced' */
  interrupt(
    runId: string,
    superstep: number,
    interrupt: PendingInterrupt,
    now: number,
  ): Promise<'ok' | 'missing' | 'fenced'> {
    const { node, request, callbackUrl, callbackExpiresAt } = interrupt;
    return this.context.script(INTERRUPT_RUN, runId, [
      superstep,
      now,
      this.context.eventsMaxLen,
      JSON.stringify(interrupt),
      // The event carries the callback URL too: a producer following the run hands it to whoever answers.
      JSON.stringify({ node, request, ...(callbackUrl ? { callbackUrl, callbackExpiresAt } : {}) }),
    ]);
  }

  /**
   * Answers a waiting run; → the superstep to hand back to the workers. `stepId`: only the interrupt of
   * that step (its callback URL's), CALLBACK_USED once it was answered (by the URL or the API).
   */
  async resume(
    runId: string,
    value: unknown,
    now: number,
    { stepId }: { stepId?: string } = {},
  ): Promise<{ superstep: number }> {
    const { keys, redis, retentionSeconds } = this.context;
    const reply = await runScript<string[]>(
      redis,
      RESUME_RUN,
      [...keys.runAll(runId), keys.runWaits(runId).waits],
      [now, this.context.eventsMaxLen, JSON.stringify(value ?? null), stepId ?? '', retentionSeconds * 1000],
    );
    if (reply[0] === 'ok') return { superstep: Number(reply[1]) };
    if (reply[0] === 'missing') throw new AgentqError('NOT_FOUND', `run ${runId} not found (it may have expired)`);
    if (reply[0] === 'answered')
      throw new AgentqError('CALLBACK_USED', `the interrupt of step ${stepId} of run ${runId} was answered already`);
    if (stepId !== undefined)
      throw new AgentqError(
        'CONFLICT',
        `run ${runId} is ${reply[1]} and no longer waits on step ${stepId}: nothing changed`,
      );
    throw new AgentqError('CONFLICT', `run ${runId} is ${reply[1]}; only a waiting run can be resumed`);
  }
}
