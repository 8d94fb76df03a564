import { Queue, type QueueOptions } from 'bullmq';
import { START_NODE, stepJobId, type StepJobData } from '../contracts/job-schema.js';
import type { StartJob } from './redis-run-store.js';
import { STEP_QUEUE } from '../contracts/queues.js';
import { allShards, shardOf, stepQueuePrefix } from '../contracts/shards.js';
import { addJobKeys, bullmqQueueKeys, type NamedQueueKeys } from '../bullmq/bullmq-keys.js';

/**
 * The step queues of a deployment: one BullMQ queue `agentq-steps` per shard, under the shard's prefix
 * (`bull:{s<k>}`), so a run's step jobs and its run-store keys share one hash tag. A run's jobs always go
 * to the queue of its shard (shardOf its id).
 */
export class StepQueues {
  private readonly queues: Queue<StepJobData>[];
  /** Each shard queue's keys, by BullMQ's names (what the creation script's start job is added with). */
  private readonly queueKeys: NamedQueueKeys[];

  /** `options`: every queue's options but its prefix, which each shard's gets from `queuePrefix`. */
  constructor(
    readonly shards: number,
    queuePrefix: string,
    options: Omit<QueueOptions, 'prefix'>,
  ) {
    this.queues = allShards(shards).map((shard) => {
      const queue = new Queue<StepJobData>(STEP_QUEUE, {
        ...options,
        prefix: stepQueuePrefix(queuePrefix, shard, shards),
      });
      // Connection errors reach the command that needed the queue; without a listener BullMQ prints them raw.
      queue.on('error', () => undefined);
      return queue;
    });
    this.queueKeys = allShards(shards).map((shard) =>
      bullmqQueueKeys(stepQueuePrefix(queuePrefix, shard, shards), STEP_QUEUE),
    );
  }

  /** The queue of the shard a run lives on. */
  forRun(runId: string): Queue<StepJobData> {
    return this.queues[shardOf(runId, this.shards)]!;
  }

  /** The key prefix of the queue of the shard a run lives on (`bull:{s0}:agentq-steps:`), for scripts that add to it. */
  keyPrefixFor(runId: string): string {
    return this.queueKeys[shardOf(runId, this.shards)]!.prefix;
  }

  /** The start job of a run (docs/concepts/step-engine.md) as the run store adds it in the run's creation script. */
  startJob(runId: string, data: StepJobData, attempts: number): StartJob {
    const keys = this.queueKeys[shardOf(runId, this.shards)]!;
    return {
      queueKeys: addJobKeys(keys),
      queuePrefix: keys.prefix,
      jobId: stepJobId(runId, 0, 0),
      name: START_NODE,
      data,
      attempts,
    };
  }

  all(): readonly Queue<StepJobData>[] {
    return this.queues;
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.close()));
  }
}
