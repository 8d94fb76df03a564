/**
 * A chaos worker serving the child-run graphs (test/helpers/child-run-graphs.ts). KILL_AT says where it
 * SIGKILLs itself, the first time only (a marker in Redis): `parent-parking` as the parent's step, its
 * children created, throws to park (before its job is moved to the delayed set); `child-running` as a
 * child's node runs while its parent is parked.
 */
import { loadConfig } from '../../shared/config/config.js';
import { ParkSignal } from '../../shared/graph/park-signal.js';
import { connectRedis } from '../../shared/redis/connect-redis.js';
import { RedisRunStore } from '../../shared/store/redis-run-store.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { childDoubleGraph, parentSumGraph } from '../helpers/child-run-graphs.js';

const killAt = process.env.KILL_AT;
const config = loadConfig();
const redis = connectRedis(config, 'worker');
const store = new RedisRunStore(redis, { keyPrefix: config.keyPrefix, shards: config.shards });
const marker = `${config.keyPrefix}:chaos:killed`;

const killOnce = async (): Promise<void> => {
  if ((await redis.set(marker, '1', 'NX')) === 'OK') process.kill(process.pid, 'SIGKILL');
};

/** Until the parent of this child has parked its step (its `step-parked` event). */
const parentParked = async (childId: string): Promise<void> => {
  const parentId = await redis.hget(store.keys.run(childId).meta, 'parentRunId');
  for (;;) {
    const events = parentId ? await store.eventLog.events(parentId) : [];
    if (events.some((event) => event.type === 'step-parked')) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

await startWorker({
  config,
  graphs: [
    childDoubleGraph(async (_n, runId) => {
      if (killAt === 'child-running') {
        await parentParked(runId);
        await killOnce();
      }
    }),
    parentSumGraph(async (error) => {
      if (killAt === 'parent-parking' && error instanceof ParkSignal) await killOnce();
    }),
  ],
  logger: createLogger(config.logLevel, { role: 'chaos-worker' }),
});
process.stdout.write('ready\n');
