import { afterAll, beforeAll, describe } from 'vitest';
import { lateBound } from './late-bound.js';
import { clusterUnavailableReason, startRedisCluster, type LocalRedisCluster } from './redis-cluster.js';

/**
 * A describe block on a real Redis Cluster (6 redis-servers on loopback: 3 masters + 3 replicas),
 * started before its tests and stopped after them. `body` gets the cluster, usable inside hooks and
 * tests. Where no cluster can start (redis-server or redis-cli not on PATH) the block is skipped and
 * the reason printed.
 */
export function describeOnCluster(title: string, body: (cluster: LocalRedisCluster) => void): void {
  const unavailable = clusterUnavailableReason();
  if (unavailable) console.warn(`skipping "${title}": ${unavailable}`);
  // Skipped, with the reason printed above, where no local Redis Cluster can start (no redis-server/redis-cli).
  describe.skipIf(unavailable)(title, () => {
    let cluster: LocalRedisCluster | undefined;
    beforeAll(async () => {
      cluster = await startRedisCluster();
    });
    afterAll(async () => {
      await cluster?.stop();
    });
    body(lateBound('the Redis Cluster', () => cluster));
  });
}
