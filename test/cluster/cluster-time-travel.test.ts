import { expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { clusterTestConfig } from '../helpers/redis-cluster.js';
import { describeOnCluster } from '../helpers/describe-on-cluster.js';
import { waitForRuns } from '../helpers/wait-for-runs.js';

// Skipped, with the reason printed, where no Redis Cluster can be started (redis-server or redis-cli not on PATH);
// `npm run test:cluster` runs it (excluded from `npm test`).
/**
 * Time travel on a Redis Cluster: a fork (or a replay) lives on another shard than its original, often another master.
 */
describeOnCluster('fork, replay and bulk retry on a real Redis Cluster', (cluster) => {
  it('AGENTQ_SHARDS=3: forks and replays of runs on every shard complete across shards', async () => {
    const config = clusterTestConfig(cluster, { AGENTQ_SHARDS: '3' });
    const worker = await startWorker({ config, logger: createLogger(config.logLevel), reconciler: false });
    const client = new AgentClient({ config });
    try {
      const runs = await Promise.all(
        Array.from({ length: 9 }, (_unused, index) =>
          client.enqueue({ graph: 'chain', input: { steps: 4 }, idempotencyKey: `tt-${index}` }),
        ),
      );
      const originals = await waitForRuns(
        client,
        runs.map((run) => run.id),
        { timeoutMs: 60_000 },
      );
      expect(originals.map((run) => run.status)).toEqual(runs.map(() => 'completed'));
      const forks = await Promise.all(originals.map((run) => client.fork(run.id, { from: 2 })));
      const replays = await Promise.all(originals.map((run) => client.replay(run.id)));
      const crossed = new Set(
        forks.map(
          (fork, index) => client.store.keys.shardOf(fork.id) !== client.store.keys.shardOf(originals[index]!.id),
        ),
      );
      expect(crossed.has(true)).toBe(true);
      const done = await waitForRuns(
        client,
        [...forks, ...replays].map((run) => run.id),
        { timeoutMs: 60_000 },
      );
      expect(done.map((run) => run.status)).toEqual(done.map(() => 'completed'));
      for (const fork of forks) {
        const steps = await client.steps(fork.id);
        expect(steps.map((step) => step.inheritedFrom === undefined)).toEqual([false, false, true, true]);
      }
      for (const replay of replays) expect(await client.replayReport(replay.id)).toMatchObject({ outcome: 'same' });
    } finally {
      await client.close();
      await worker.close();
    }
  });
});
