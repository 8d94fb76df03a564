import type { JobsOptions, Queue } from 'bullmq';
import type { Task } from '../shared/graph/graph.js';
import type { GraphRegistry } from '../shared/graph/graph-registry.js';
import { stepJobId, stepJobOptions, type StepJobData } from '../shared/job-schema.js';

const LIVE_STATES = new Set(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children']);

/**
 * Adds step jobs: one per task of a superstep, with deterministic ids (`{runId}.s{k}.t{i}`) and the
 * attempts of the node's retry policy. The id dedupes concurrent adds while the job exists; the run's
 * cursor, not the id, is what keeps a committed step from running again.
 */
export class StepJobs {
  constructor(
    private readonly queue: Queue<StepJobData>,
    private readonly registry: GraphRegistry,
  ) {}

  private jobOptions(graphId: string, node: string, jobId: string): JobsOptions {
    const [name, version] = splitGraphId(graphId);
    const policy = this.registry.find(name, version)?.nodes.get(node)?.retry;
    return stepJobOptions(jobId, policy?.maxAttempts ?? 3);
  }

  async add(runId: string, superstep: number, tasks: Task[], graphId: string, only?: Set<number>): Promise<void> {
    const jobs = tasks
      .map((task, index) => ({ task, index }))
      .filter(({ index }) => !only || only.has(index))
      .map(({ task, index }) => {
        const jobId = stepJobId(runId, superstep, index);
        return {
          name: task.node,
          data: { runId, superstep, task: index, node: task.node, graph: graphId },
          opts: this.jobOptions(graphId, task.node, jobId),
        };
      });
    if (jobs.length === 1) await this.queue.add(jobs[0]!.name, jobs[0]!.data, jobs[0]!.opts);
    else if (jobs.length > 1) await this.queue.addBulk(jobs);
  }

  /** How many of the superstep's task jobs are live (waiting, delayed, active, …). */
  async liveCount(runId: string, superstep: number, taskCount: number): Promise<number> {
    let live = 0;
    for (let index = 0; index < taskCount; index += 1) {
      const job = await this.queue.getJob(stepJobId(runId, superstep, index));
      if (job && LIVE_STATES.has(await job.getState())) live += 1;
    }
    return live;
  }

  /**
   * Makes sure every unfinished task of the superstep has a live job: missing ones are added, and
   * finished ones (failed by the stall limit, or completed without a commit) are replaced.
   * → how many jobs were (re-)added.
   */
  async ensure(runId: string, superstep: number, tasks: Task[], graphId: string, done: Set<number> = new Set()): Promise<number> {
    const missing = new Set<number>();
    for (let index = 0; index < tasks.length; index += 1) {
      if (done.has(index)) continue;
      const job = await this.queue.getJob(stepJobId(runId, superstep, index));
      if (job) {
        const state = await job.getState();
        if (LIVE_STATES.has(state)) continue;
        await job.remove().catch(() => undefined);
      }
      missing.add(index);
    }
    if (missing.size > 0) await this.add(runId, superstep, tasks, graphId, missing);
    return missing.size;
  }
}

export function splitGraphId(graphId: string): [string, string | undefined] {
  const at = graphId.lastIndexOf('@');
  return at === -1 ? [graphId, undefined] : [graphId.slice(0, at), graphId.slice(at + 1)];
}
