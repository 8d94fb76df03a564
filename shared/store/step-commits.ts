import type { Concurrency } from '../contracts/job-schema.js';
import type { Usage } from '../contracts/run-record.js';
import { runScript } from '../redis/create-redis.js';
import { parseBeginReply, type BeginResult } from './begin-reply.js';
import { ADD_RUN_USAGE, BEGIN_STEP, COMMIT_STEP, NOTE_ON_LIVE_META, PUT_MEMO } from './run-scripts.js';
import type { RunStoreContext } from './run-store-context.js';
import type { CommitRequest, CommitResult, TaskWrite } from './run-store-types.js';

/** A step's writes to its run: BEGIN, COMMIT (and the arguments engine v2's transition reuses), memos, usage. */
export class StepCommits {
  constructor(private readonly context: RunStoreContext) {}

  /** BEGIN on its own; `cachedSuperstep`: the caller holds the state at that cursor, so none is sent if it is current. */
  async begin(
    runId: string,
    superstep: number,
    task: number,
    startData: Record<string, unknown>,
    now: number,
    cachedSuperstep?: number,
  ): Promise<BeginResult> {
    const reply = await runScript<unknown[]>(this.context.stepRedis, BEGIN_STEP, this.context.keys.runAll(runId), [
      superstep,
      task,
      now,
      this.context.eventsMaxLen,
      JSON.stringify(startData),
      cachedSuperstep ?? '',
    ]);
    return parseBeginReply(reply);
  }

  /** COMMIT's arguments (run-scripts.ts), also the first arguments of engine v2's transition script. */
  commitArgs(request: CommitRequest, now: number): (string | number)[] {
    const { step, outcome } = request;
    const statePairs: string[] = [];
    if (request.stateJson) for (const key in request.stateJson) statePairs.push(key, request.stateJson[key]!);
    else for (const key in request.state) statePairs.push(key, JSON.stringify(request.state[key]));
    const endData = step ? { node: step.node, superstep: step.superstep, task: step.task, attempt: step.attempts } : {};
    return [
      request.superstep,
      request.task,
      request.mode,
      now,
      this.context.eventsMaxLen,
      this.context.retentionSeconds,
      JSON.stringify(step ?? {}),
      JSON.stringify(request.write ?? null),
      request.totalTasks,
      outcome.kind,
      outcome.kind === 'next' ? JSON.stringify(outcome.tasks) : JSON.stringify(outcome.output ?? null),
      JSON.stringify(endData),
      request.usage?.inputTokens ?? 0,
      request.usage?.outputTokens ?? 0,
      request.usage?.costUsd ?? 0,
      request.memos === false ? '0' : '1',
      statePairs.length / 2,
      ...statePairs,
      request.messages.length,
      ...request.messages.map((message) => JSON.stringify(message)),
      // After the messages, so the arguments before them keep their places.
      request.usage?.cachedInputTokens ?? 0,
      request.usage?.uncachedCostUsd ?? 0,
    ];
  }

  /** COMMIT's reply, parsed; a run it finished gets its finish hooks run (webhooks, metrics, batch slot). */
  async committed(runId: string, reply: string[]): Promise<CommitResult> {
    const kind = reply[0];
    if (kind === 'fenced' || kind === 'missing' || kind === 'deadline') return { kind };
    if (kind === 'stored') return { kind, index: Number(reply[1]), count: Number(reply[2]) };
    if (kind === 'completed' || kind === 'cancelled')
      await this.context.finished(runId, kind, {
        tenant: reply[2] || null,
        webhookUrl: reply[3] || null,
        batchId: reply[4] || null,
        outputBytes: Number(reply[5] ?? 0),
        conversationId: reply[6] || null,
        graph: reply[7] || null,
        graphVersion: reply[8] || null,
        concurrency: reply[9] ? (JSON.parse(reply[9]) as Concurrency) : null,
        ...(reply.length > 10 ? { usageFields: reply.slice(10).map((value) => value || null) } : {}),
      });
    return { kind: kind as 'advanced' | 'completed' | 'cancelled', index: Number(reply[1]) };
  }

  async commit(request: CommitRequest, now: number): Promise<CommitResult> {
    const reply = await runScript<string[]>(
      this.context.stepRedis,
      COMMIT_STEP,
      this.context.keys.runAll(request.runId),
      this.commitArgs(request, now),
    );
    return this.committed(request.runId, reply);
  }

  /** Stored writes of the current superstep's tasks, by task index. */
  async writes(runId: string): Promise<Map<number, TaskWrite>> {
    const fields = await this.context.redis.hgetall(this.context.keys.run(runId).writes);
    return new Map(Object.entries(fields).map(([task, value]) => [Number(task), JSON.parse(value) as TaskWrite]));
  }

  /**
   * Usage of an attempt that failed after paying for a model call (a committed step carries its own), added
   * only while the run exists: a late attempt must not make an expired run's meta again.
   */
  async addUsage(runId: string, usage: Usage): Promise<void> {
    await runScript(
      this.context.redis,
      ADD_RUN_USAGE,
      [this.context.keys.run(runId).meta],
      [
        usage.inputTokens,
        usage.outputTokens,
        usage.costUsd ? usage.costUsd : '',
        usage.cachedInputTokens ? usage.cachedInputTokens : '',
        usage.uncachedCostUsd ? usage.uncachedCostUsd : '',
      ],
    );
  }

  /**
   * Sets `field` on the run's meta unless it is there (and `updatedAt`, when given), only while the run exists:
   * → 1 noted, 0 already there, -1 the run is gone (a late delivery must not make an expired meta again).
   */
  async noteOnMeta(runId: string, field: string, value: string, updatedAt?: number): Promise<1 | 0 | -1> {
    const meta = this.context.keys.run(runId).meta;
    return runScript<1 | 0 | -1>(this.context.redis, NOTE_ON_LIVE_META, [meta], [field, value, updatedAt ?? '']);
  }

  /**
   * Saves a step's memoised paid work (saved before it is acted on, so it is never paid for twice), all of it: memos
   * live in one hash field per step, are read by BEGIN when the step starts and deleted when it commits (after which it
   * never runs again). Only the worker running the step writes them, so it writes what it holds. Nothing is written
   * once the run has finished or is gone (a late save would keep the memo hash past the run): false then.
   */
  async memoPut(runId: string, stepId: string, memos: Record<string, unknown>): Promise<boolean> {
    const keys = this.context.keys.run(runId);
    const reply = await runScript<1 | 'ended'>(
      this.context.redis,
      PUT_MEMO,
      [keys.memo, keys.meta],
      [stepId, JSON.stringify(memos)],
    );
    return reply !== 'ended';
  }
}
