import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { stepJobId, type StepJobData } from '../../shared/contracts/job-schema.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { runScript } from '../../shared/redis/create-redis.js';
import { bullmqQueueKeys, moveToActiveKeys, type NamedQueueKeys } from '../../shared/bullmq/bullmq-keys.js';
import { jobLockKey, leanJobData, nextJobData, RELEASE_LOCK_LUA } from '../../shared/bullmq/bullmq-jobs.js';
import {
  parseBeginReply,
  type BeginResult,
  type CommitRequest,
  type CommitResult,
  type RedisRunStore,
} from '../../shared/store/redis-run-store.js';
import type { StepMeta } from '../../shared/store/run-meta.js';
import { fairArgs, type FairQueue } from '../../shared/store/fair-queue.js';
import { STEP_TAKE, STEP_TRANSITION } from '../../shared/store/step-transition-scripts.js';
import { allShards, stepQueuePrefix } from '../../shared/contracts/shards.js';
import type { Task } from '../../shared/graph/graph.js';

/** A job handed to this worker by a script, with its cursor. */
export interface HandedJob {
  /** As the seam's nextJobData gives it for a worker's hand-out: `[job JSON, id, rate-limit delay, delay until]`. */
  next: unknown[];
  /** BEGIN of the job, done in the same script; absent for a job that is not a well-formed step job. */
  begin?: BeginResult;
  /** It came by eager dispatch (the next step of the run just committed). */
  eager: boolean;
  /** It is another run's start job (EagerStarts): its eager hops count from 1 again. */
  started?: boolean;
}

/** A step of a node marked inline, run by the job of the step before it (see StepTransitions.commit). */
export interface InlineCommit {
  request: CommitRequest;
  /** Its step-start event's data (node, superstep, task, attempt), written in the same script. */
  startData: { node: string; superstep: number; task: number; attempt: number };
  /** The events its node emitted, in order: written after its step-start, before its commit's step-end. */
  events: { type: string; data: Record<string, unknown> }[];
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

/** What a transition may do besides the step's own commit. */
export interface TransitionExtras {
  /** Steps of nodes marked inline that the job ran after its own. @default none */
  inline?: InlineCommit[];
  /** @default Date.now() */
  now?: number;
}

/** The job a transition finishes, and what this worker wants back. */
export interface FinishingJob {
  id: string;
  token: string;
  attempts: number;
  /** Its attempts made before this one (BullMQ's `attemptsMade`, the hash's atm). */
  attemptsMade: number;
  /** Fetch the queue's next job in the same script (BullMQ's fetch-next). */
  fetchNext: boolean;
  /** Hand the next step straight back to this worker if it is a single task (eager dispatch). */
  eager: boolean;
  /** The finished job's return value. */
  returnValue: string;
}

interface StepTransitionsOptions {
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
  /** Weighted fairness between tenants (AGENTQ_TENANT_WEIGHTS): the next jobs' priorities are decided in the script. */
  fair?: FairQueue;
}

/**
 * Engine v2's step scripts from the worker's side (docs/concepts/step-engine.md): `commit` is a step's whole transition
 * in one round trip — fenced commit, the next superstep's jobs, finishing the current job and the next job
 * with its cursor; `take` is a cold fetch that brings the cursor along.
 */
export class StepTransitions {
  private readonly queueKeys: NamedQueueKeys[];

  constructor(private readonly options: StepTransitionsOptions) {
    this.queueKeys = allShards(options.shards).map((shard) =>
      bullmqQueueKeys(stepQueuePrefix(options.queuePrefix, shard, options.shards), STEP_QUEUE),
    );
  }

  /**
   * `meta`: the run as the step saw it (its BEGIN); its BullMQ priority goes with its next jobs, and an
   * eager hop's BEGIN is made from it. `inline`: steps of nodes marked inline that this job ran after its
   * own, committed in the same script after `request`; `next` is then what follows the last of them.
   */
  async commit(
    request: CommitRequest,
    next: Task[],
    graphId: string,
    job: FinishingJob | undefined,
    meta: StepMeta,
    { inline = [], now = Date.now() }: TransitionExtras = {},
  ): Promise<TransitionResult> {
    const priority = meta.priority;
    const { store, redis } = this.options;
    const runId = request.runId;
    const shard = store.keys.shardOf(runId);
    const q = this.queueKeys[shard]!;
    const superstep = (inline.at(-1)?.request.superstep ?? request.superstep) + 1;
    const jobs = next.map((task, index): NextJob => {
      const data: StepJobData = { runId, superstep, task: index, node: task.node, graph: graphId };
      return [
        stepJobId(runId, superstep, index),
        task.node,
        JSON.stringify(data),
        this.options.attemptsOf(graphId, task.node),
      ];
    });
    // The script builds the run's other keys and the queue's from these two (see STEP_TRANSITION).
    const keys = [store.keys.runMeta(runId)];
    // commitArgs' array carries the rest too (pushed, not copied into a new one).
    const args = store.commits.commitArgs(request, now);
    args.push(
      job?.id ?? '',
      job?.token ?? '',
      job?.fetchNext ? '1' : '0',
      job?.eager ? '1' : '0',
      q.prefix,
      this.options.lockDurationMs,
      this.options.keepCompletedJobs,
      job?.attempts ?? 1,
      this.options.workerName ?? '',
      store.keys.runKeyPrefix(shard),
      JSON.stringify(jobs),
      job?.returnValue ?? 'null',
      priority,
      job?.attemptsMade ?? 0,
      ...fairArgs(this.options.fair?.argsFor(meta.tenant, runId)),
      inline.length,
    );
    for (const { request: step, startData, events } of inline) {
      const stepArgs = store.commits.commitArgs(step, now);
      const emitted = events.map(({ type, data }) => [type, JSON.stringify(data)]);
      args.push(stepArgs.length + 2, JSON.stringify(startData), JSON.stringify(emitted), ...stepArgs);
    }
    const [commitReply, finishCode, handed, begun, eager, inlined, usage] = await runScript<
      [string[], number, unknown[] | null, unknown[] | null, number, number, (string | number)[] | null]
    >(redis, STEP_TRANSITION, keys, args);
    const commit = await store.commits.committed(runId, commitReply);
    const result = { commit, finishCode: Number(finishCode), inlined: Number(inlined) };
    if (eager === LEAN_HOP && commit.kind === 'advanced') {
      return {
        ...result,
        handed: this.leanHop(
          jobs[0]!,
          // One copy of the meta, as BEGIN would read it at the cursor the commit set (the run is running).
          {
            ...meta,
            status: 'running',
            superstep,
            tasks: next,
            stepCount: commit.index + 1,
            usage: usageOf(usage, meta),
          },
          now,
        ),
      };
    }
    return { ...result, ...(handed ? { handed: handedJob(handed, begun, eager === 1) } : {}) };
  }

  /**
   * The job the script's lean hop handed back (bullmq_lean_hop), made here from the request that
   * described it rather than sent back (the seam's leanJobData: timestamp and processedOn are the
   * request's `now`); and its BEGIN, the run's meta at the cursor the commit set, its state in this
   * worker's cache, no memos (no attempt of a superstep reached just now began before). `meta` is the
   * run's at that cursor (the caller's copy, status running).
   * test/integration/lean-hop.test.ts compares both with what Redis holds.
   */
  private leanHop([id, node, data, attempts]: NextJob, meta: StepMeta, now: number): HandedJob {
    const { workerName } = this.options;
    return {
      next: leanJobData({
        id,
        name: node,
        data,
        attempts,
        backoff: STEP_BACKOFF,
        now,
        ...(workerName ? { workerName } : {}),
      }),
      begin: { kind: 'run', meta, state: null, memos: {} },
      eager: true,
    };
  }

  /** Lets go of a step job's lock if it still holds `token` (BullMQ's releaseLock script): the stalled-job check then hands the job on. */
  async releaseLock(shard: number, jobId: string, token: string): Promise<void> {
    await runScript(this.options.redis, RELEASE_LOCK_LUA, [jobLockKey(this.queueKeys[shard]!.prefix + jobId)], [token]);
  }

  /**
   * A cold fetch from shard `shard`'s queue (BullMQ's moveToActive) with each taken job's cursor: up to
   * `count` jobs in one round trip, the i-th (i > 1) locked with token `${token}.${i}`. The last entry is
   * moveToActive's reply that took nothing when the queue ran out first (it carries BullMQ's delays).
   */
  async take(
    shard: number,
    token: string,
    name: string | undefined,
    eventsMaxLen: number,
    count = 1,
    now = Date.now(),
  ): Promise<TakenJob[]> {
    const q = this.queueKeys[shard]!;
    const keys = moveToActiveKeys(q);
    const args = [
      q.prefix,
      now,
      token,
      this.options.lockDurationMs,
      name ?? '',
      this.options.store.keys.runKeyPrefix(shard),
      eventsMaxLen,
      count,
    ];
    const taken = await runScript<[unknown[], unknown[] | null, string][]>(this.options.redis, STEP_TAKE, keys, args);
    return taken.map(([raw, begun, jobToken]) => ({ token: jobToken, handed: handedJob(raw, begun, false) }));
  }
}

/** One job of a cold fetch and the lock token it was taken with. */
interface TakenJob {
  token: string;
  handed: HandedJob;
}

/** A step job's backoff: agentq's own (start-worker.ts's backoffStrategy reads the node's retry policy). */
const STEP_BACKOFF = { type: 'agentq' };

/** STEP_TRANSITION's eager flag for a lean hop: the handed job is the one the request described. */
const LEAN_HOP = 2;

/** A next job as the transition's request describes it (ARGV t+10): id, name (its node), data JSON, attempts. */
type NextJob = [string, string, string, number];

function handedJob(raw: unknown[], begun: unknown[] | null, eager: boolean): HandedJob {
  return { next: nextJobData(raw), eager, ...(Array.isArray(begun) ? { begin: parseBeginReply(begun) } : {}) };
}

/** The run's usage as the transition's reply gives it (inputTokens, outputTokens, costUsd), or the step's own view. */
function usageOf(reply: (string | number)[] | null, meta: StepMeta): StepMeta['usage'] {
  if (!reply) return meta.usage;
  return { inputTokens: Number(reply[0]), outputTokens: Number(reply[1]), costUsd: Number(reply[2]) };
}
