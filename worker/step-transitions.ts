import { QueueKeys } from 'bullmq';
import type { RedisConnection } from '../shared/redis/connect-redis.js';
import { stepJobId, type StepJobData } from '../shared/job-schema.js';
import { STEP_QUEUE } from '../shared/queues.js';
import { runScript } from '../shared/redis/create-redis.js';
import { parseBeginReply, type BeginResult, type CommitRequest, type CommitResult, type RedisRunStore } from '../shared/redis/redis-run-store.js';
import { STEP_TAKE, STEP_TRANSITION } from '../shared/redis/step-transition-scripts.js';
import { allShards, stepQueuePrefix } from '../shared/shards.js';
import type { Task } from '../shared/graph/graph.js';

/** A job handed to this worker by a script, as BullMQ's moveToActive/moveToFinished return it, with its cursor. */
export interface HandedJob {
  /** BullMQ's `[fields, id, rate-limit delay, delay until]` (raw2NextJobData turns it into job data). */
  raw: unknown[];
  /** BEGIN of the job, done in the same script; absent for a job that is not a well-formed step job. */
  begin?: BeginResult;
  /** It came by eager dispatch (the next step of the run just committed). */
  eager: boolean;
}

/** A step of a node marked inline, run by the job of the step before it (see StepTransitions.commit). */
export interface InlineCommit {
  request: CommitRequest;
  /** Its step-start event's data (node, superstep, task, attempt), written in the same script. */
  startData: { node: string; superstep: number; task: number; attempt: number };
}

export interface TransitionResult {
  /** The last commit's result: the inline steps' last one when there were any and all committed. */
  commit: CommitResult;
  /** Inline steps committed after the job's own. */
  inlined: number;
  /** moveToFinished's code: 0, or BullMQ's negative error (the lock was lost: the job is another worker's now). */
  finishCode: number;
  handed?: HandedJob;
}

/** The job a transition finishes, and what this worker wants back. */
export interface FinishingJob {
  id: string;
  token: string;
  attempts: number;
  /** Fetch the queue's next job in the same script (BullMQ's fetch-next). */
  fetchNext: boolean;
  /** Hand the next step straight back to this worker if it is a single task (eager dispatch). */
  eager: boolean;
  /** The finished job's return value. */
  returnValue: string;
}

export interface StepTransitionsOptions {
  store: RedisRunStore;
  /** The connection of the step scripts (one of its own: see RunStoreOptions.stepRedis). */
  redis: RedisConnection;
  queuePrefix: string;
  shards: number;
  lockDurationMs: number;
  /** Completed step jobs BullMQ keeps (AGENTQ_KEEP_COMPLETED_JOBS). */
  keepCompletedJobs: number;
  /** A node's step-job attempts (its retry policy). */
  attemptsOf: (graphId: string, node: string) => number;
  workerName?: string;
}

/**
 * Engine v2's step scripts from the worker's side (DESIGN §2): `commit` is a step's whole transition in
 * one round trip — fenced commit, the next superstep's jobs, finishing the current job and the next job
 * with its cursor; `take` is a cold fetch that brings the cursor along.
 */
export class StepTransitions {
  private readonly queueKeys: Record<string, string>[];

  constructor(private readonly options: StepTransitionsOptions) {
    this.queueKeys = allShards(options.shards).map((shard) => new QueueKeys(stepQueuePrefix(options.queuePrefix, shard, options.shards)).getKeys(STEP_QUEUE));
  }

  /**
   * `priority`: the run's BullMQ priority, which its next jobs carry (0 none). `inline`: steps of nodes
   * marked inline that this job ran after its own, committed in the same script after `request`; `next`
   * is then what follows the last of them.
   */
  async commit(
    request: CommitRequest,
    next: Task[],
    graphId: string,
    job: FinishingJob | undefined,
    priority = 0,
    inline: InlineCommit[] = [],
    now = Date.now(),
  ): Promise<TransitionResult> {
    const { store, redis } = this.options;
    const runId = request.runId;
    const shard = store.keys.shardOf(runId);
    const q = this.queueKeys[shard]!;
    const superstep = (inline.at(-1)?.request.superstep ?? request.superstep) + 1;
    const jobs = next.map((task, index) => {
      const data: StepJobData = { runId, superstep, task: index, node: task.node, graph: graphId };
      return [stepJobId(runId, superstep, index), task.node, JSON.stringify(data), this.options.attemptsOf(graphId, task.node)];
    });
    // The script builds the run's other keys and the queue's from these two (see STEP_TRANSITION).
    const keys = [store.keys.runMeta(runId)];
    const args = [
      ...store.commitArgs(request, now),
      job?.id ?? '',
      job?.token ?? '',
      job?.fetchNext ? '1' : '0',
      job?.eager ? '1' : '0',
      q['']!,
      this.options.lockDurationMs,
      this.options.keepCompletedJobs,
      job?.attempts ?? 1,
      this.options.workerName ?? '',
      store.keys.runKeyPrefix(shard),
      JSON.stringify(jobs),
      job?.returnValue ?? 'null',
      priority,
      inline.length,
    ];
    for (const { request: step, startData } of inline) {
      const stepArgs = store.commitArgs(step, now);
      args.push(stepArgs.length + 1, JSON.stringify(startData), ...stepArgs);
    }
    const [commitReply, finishCode, handed, begun, eager, inlined] = await runScript<[string[], number, unknown[] | null, unknown[] | null, number, number]>(
      redis,
      STEP_TRANSITION,
      keys,
      args,
    );
    const commit = await store.committed(runId, commitReply);
    return { commit, finishCode: Number(finishCode), inlined: Number(inlined), ...(handed ? { handed: handedJob(handed, begun, eager === 1) } : {}) };
  }

  /** Lets go of a step job's lock if it still holds `token` (BullMQ's releaseLock script): the stalled-job check then hands the job on. */
  async releaseLock(shard: number, jobId: string, token: string): Promise<void> {
    await runScript(this.options.redis, RELEASE_LOCK, [`${this.queueKeys[shard]!['']}${jobId}:lock`], [token]);
  }

  /** A cold fetch from shard `shard`'s queue (BullMQ's moveToActive) with the taken job's cursor. */
  async take(shard: number, token: string, name: string | undefined, eventsMaxLen: number, now = Date.now()): Promise<HandedJob> {
    const q = this.queueKeys[shard]!;
    const keys = [q.wait!, q.active!, q.prioritized!, q.events!, q.stalled!, q.limiter!, q.delayed!, q.paused!, q.meta!, q.pc!, q.marker!];
    const args = [q['']!, now, token, this.options.lockDurationMs, name ?? '', this.options.store.keys.runKeyPrefix(shard), eventsMaxLen];
    const [taken, begun] = await runScript<[unknown[], unknown[] | null]>(this.options.redis, STEP_TAKE, keys, args);
    return handedJob(taken, begun, false);
  }
}

const RELEASE_LOCK = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

function handedJob(raw: unknown[], begun: unknown[] | null, eager: boolean): HandedJob {
  return { raw, eager, ...(Array.isArray(begun) ? { begin: parseBeginReply(begun) } : {}) };
}
