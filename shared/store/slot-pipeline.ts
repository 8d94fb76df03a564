import { Command, type ChainableCommander, type Cluster } from 'ioredis';
import { isCluster, type RedisConnection } from '../redis/connect-redis.js';

type QueuedCommand = [name: string, ...args: unknown[]];
type PipelineReply = [error: Error | null, result: unknown];

/**
 * A pipeline whose commands may touch keys of different Redis Cluster slots (a run's shard-tagged keys
 * and the global indexes beside them, several runs' metas). On one Redis it is `redis.pipeline()`. On a
 * Cluster, ioredis refuses a pipeline whose keys are not all served by one node, which for keys of
 * different slots is a matter of chance; so the commands are grouped by slot, each group sent as a
 * pipeline of its own, all groups at once, and the replies put back in the order the commands were
 * queued. Nothing here is atomic on either kind of Redis (a pipeline is not a transaction): callers
 * order their writes so that a crash between two leaves at worst a stale index entry.
 */
export function slotPipeline(redis: RedisConnection): ChainableCommander {
  if (!isCluster(redis)) return redis.pipeline();
  const commands: QueuedCommand[] = [];
  const pipeline: ChainableCommander = new Proxy({} as ChainableCommander, {
    get(_target, name) {
      if (name === 'exec') return () => execBySlot(redis, commands);
      if (name === 'length') return commands.length;
      // Not a thenable: `await pipeline` must not call a queued "then" command.
      if (typeof name !== 'string' || name === 'then') return undefined;
      return (...args: unknown[]) => {
        commands.push([name, ...args]);
        return pipeline;
      };
    },
  });
  return pipeline;
}

async function execBySlot(cluster: Cluster, commands: QueuedCommand[]): Promise<PipelineReply[]> {
  const groups = new Map<number, number[]>();
  commands.forEach(([name, ...args], index) => {
    // A command without keys (PUBLISH is routed by ioredis anyway) goes with slot 0's group.
    const slot = new Command(name, args as (string | number)[]).getSlot() ?? 0;
    const group = groups.get(slot);
    if (group) group.push(index);
    else groups.set(slot, [index]);
  });
  const replies: PipelineReply[] = new Array<PipelineReply>(commands.length);
  await Promise.all(
    [...groups.values()].map(async (indexes) => {
      const groupReplies = (await cluster.pipeline(indexes.map((index) => commands[index]!)).exec()) ?? [];
      indexes.forEach((commandIndex, position) => {
        replies[commandIndex] = (groupReplies[position] as PipelineReply | undefined) ?? [
          new Error('no reply from the pipeline'),
          null,
        ];
      });
    }),
  );
  return replies;
}
