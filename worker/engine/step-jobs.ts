import type { JobsOptions } from 'bullmq';
import type { Task } from '../../shared/graph/graph.js';
import type { GraphRegistry } from '../../shared/graph/graph-registry.js';
import { graphIdOf, stepJobId, stepJobOptions } from '../../shared/contracts/job-schema.js';
import type { StepQueues } from '../../shared/store/step-queues.js';
import type { FairQueue } from '../../shared/store/fair-queue.js';
import type { RedisConnection } from '../../shared/redis/connect-redis.js';

const LIVE_STATES = new Set(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children']);

/**
 * The run whose step jobs are added: its id, its graph (`name@version`), its BullMQ priority (0 none)
 * and its tenant (for weighted fairness; read from the run when left out).
 */
interface StepJobRun {
  runId: string;
  graphId: string;
  priority: number;
  tenant?: string;
}

/** A run meta as StepJobRun. */
export function stepJobRun(meta: {
  id: string;
  graph: string;
  graphVersion: string | null;
  priority: number;
  tenant: string;
}): StepJobRun {
  return { runId: meta.id, graphId: graphIdOf(meta), priority: meta.priority, tenant: meta.tenant };
}

interface StepJobsOptions {
  /** Weighted fairness between tenants (AGENTQ_TENANT_WEIGHTS): each job's priority decided as it is added. */
  fair?: FairQueue;
  /** The connection the fair queue's script runs on. */
  redis?: RedisConnection;
}

/**
 * Adds step jobs: one per task of a superstep, with deterministic ids (`{runId}.s{k}.t{i}`) and the
 * attempts of the node's retry policy. The id dedupes concurrent adds while the job exists; the run's
 * cursor, not the id, is what keeps a committed step from running again.
 */
export class StepJobs {
  constructor(
    readonly queues: StepQueues,
    private readonly registry: GraphRegistry,
    private readonly options: StepJobsOptions = {},
  ) {}

  /** Attempts of a node's step job: its retry policy's maxAttempts (3 for a node this worker lacks). */
  attemptsOf(graphId: string, node: string): number {
    const [name, version] = splitGraphId(graphId);
    return this.registry.find(name, version)?.nodes.get(node)?.retry.maxAttempts ?? 3;
  }

  private jobOptions(run: StepJobRun, node: string, jobId: string, priority: number): JobsOptions {
    return stepJobOptions(jobId, this.attemptsOf(run.graphId, node), priority);
  }

  /** The priorities of `count` jobs of the run: its own, or with weighted fairness on, its tenant's turn. */
  private async priorities(run: StepJobRun, count: number): Promise<number[]> {
    const { fair, redis } = this.options;
    if (!fair?.on || !redis || count === 0) return new Array<number>(count).fill(run.priority);
    return fair.priorities(redis, run, this.queues.keyPrefixFor(run.runId), count);
  }

  async add(run: StepJobRun, superstep: number, tasks: Task[], only?: Set<number>): Promise<void> {
    const { runId, graphId } = run;
    const chosen = tasks.map((task, index) => ({ task, index })).filter(({ index }) => !only || only.has(index));
    const priorities = await this.priorities(run, chosen.length);
    const jobs = chosen.map(({ task, index }, at) => {
      const jobId = stepJobId(runId, superstep, index);
      return {
        name: task.node,
        data: { runId, superstep, task: index, node: task.node, graph: graphId },
        opts: this.jobOptions(run, task.node, jobId, priorities[at]!),
      };
    });
    const queue = this.queues.forRun(runId);
    if (jobs.length === 1) await queue.add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts);
    else if (jobs.length > 1) await queue.addBulk(jobs);
  }

  /** How many of the superstep's task jobs are live (waiting, delayed, active, …). */
  async liveCount(runId: string, superstep: number, taskCount: number): Promise<number> {
    let live = 0;
    for (let index = 0; index < taskCount; index += 1) {
      const job = await this.queues.forRun(runId).getJob(stepJobId(runId, superstep, index));
      if (job && LIVE_STATES.has(await job.getState())) live += 1;
    }
    return live;
  }

  /**
   * Makes sure every unfinished task of the superstep has a live job: missing ones are added, and
   * finished ones (failed by the stall limit, or completed without a commit) are replaced.
   * → how many jobs were (re-)added.
   */
  async ensure(run: StepJobRun, superstep: number, tasks: Task[], done: Set<number> = new Set()): Promise<number> {
    const { runId } = run;
    const missing = new Set<number>();
    for (let index = 0; index < tasks.length; index += 1) {
      if (done.has(index)) continue;
      const job = await this.queues.forRun(runId).getJob(stepJobId(runId, superstep, index));
      if (job) {
        const state = await job.getState();
        if (LIVE_STATES.has(state)) continue;
        await job.remove().catch(() => undefined);
      }
      missing.add(index);
    }
    if (missing.size > 0) await this.add(run, superstep, tasks, missing);
    return missing.size;
  }
}

export function splitGraphId(graphId: string): [string, string | undefined] {
  const at = graphId.lastIndexOf('@');
  return at === -1 ? [graphId, undefined] : [graphId.slice(0, at), graphId.slice(at + 1)];
}
