/**
 * `npm run bench:rollout`: the share of new runs a graph rollout sends to its ramping version. An
 * in-process worker serves `ramp-echo` at versions 1 and 2 (one node that answers its version); the
 * rollout is current 1, ramping 2 at 10 %; 1,000 runs with fresh random ids (`-- --quick`: 200) are
 * enqueued without a version and waited for. Uses REDIS_URL, or a private redis-server when it is unset.
 * Writes bench/results/rollout-latest.json.
 *
 * - `rollout_runs`: runs created; `rollout_ramp_percent`: the ramp's percent (10).
 * - `rollout_share_in_records_pct`: runs whose record named version 2 at creation, in percent of all.
 * - `rollout_share_ran_pct`: runs whose output says version 2 ran them, in percent (equal to the above:
 *   the worker runs the version in the record).
 * - `rollout_share_expected_pct`: the share the assignment function itself gives those ids (rolloutBucket
 *   < 10): the records must agree with it run by run (`rollout_mismatches`: 0).
 * - `rollout_share_sd_pct`: one binomial standard deviation at this many runs, for reading the share.
 * - `rollout_share_100k_ids_pct`: the function alone over 100,000 fresh run ids (no Redis): how even the
 *   buckets are.
 */
import { randomBytes } from 'node:crypto';
import { AgentClient } from '../producer/client/agent-client.js';
import { loadConfig } from '../shared/config/config.js';
import { newRunId } from '../shared/contracts/ids.js';
import { rolloutBucket } from '../shared/store/rollouts/graph-rollouts.js';
import { createLogger } from '../shared/telemetry/logger.js';
import { startWorker } from '../worker/start-worker.js';
import { versionEchoGraph } from '../test/helpers/version-echo-graph.js';
import type { BenchContext, BenchFigures } from './lib/bench-section.js';
import { runStandalone } from './lib/run-standalone.js';
import { round } from './lib/stats.js';

const PERCENT = 10;

async function runRollout({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const runs = quick ? 200 : 1000;
  const id = randomBytes(3).toString('hex');
  const config = loadConfig({
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `benchr${id}`,
    AGENTQ_QUEUE_PREFIX: `benchrq${id}`,
    AGENTQ_LOG_LEVEL: 'warn',
    EMBED_PROVIDER: 'none',
    // Two busy cores: a producer's fail-fast bound would fail the bench, not measure it.
    AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '10000',
  });
  const worker = await startWorker({
    config,
    builtInGraphs: false,
    graphs: [versionEchoGraph('ramp-echo', '1'), versionEchoGraph('ramp-echo', '2')],
    logger: createLogger(config.logLevel),
    reconciler: false,
    concurrency: 16,
  });
  const client = new AgentClient({ config });
  try {
    await client.rollouts.set('ramp-echo', { current: '1', ramp: '2', percent: PERCENT });
    const records = [];
    for (let index = 0; index < runs; index += 1) records.push(await client.enqueue({ graph: 'ramp-echo', input: {} }));
    log(`${runs} runs enqueued; waiting for them`);
    // One at a time: a thousand waits at once would queue their reads behind the worker's steps.
    const done = [];
    for (const record of records) done.push(await client.wait(record.id, { timeoutMs: 600_000 }));
    const inRecords = records.filter((record) => record.graphVersion === '2').length;
    const ran = done.filter((record) => record.output === '2').length;
    const expected = records.filter((record) => rolloutBucket(record.id) < PERCENT).length;
    const mismatches = records.filter(
      (record) => record.graphVersion !== (rolloutBucket(record.id) < PERCENT ? '2' : '1'),
    ).length;
    const p = PERCENT / 100;
    return {
      rollout_runs: runs,
      rollout_ramp_percent: PERCENT,
      rollout_share_in_records_pct: round((100 * inRecords) / runs),
      rollout_share_ran_pct: round((100 * ran) / runs),
      rollout_share_expected_pct: round((100 * expected) / runs),
      rollout_mismatches: mismatches,
      rollout_share_sd_pct: round(100 * Math.sqrt((p * (1 - p)) / runs)),
      rollout_share_100k_ids_pct: round(
        Array.from({ length: 100_000 }, () => rolloutBucket(newRunId())).filter((bucket) => bucket < PERCENT).length /
          1000,
      ),
    };
  } finally {
    await client.close();
    await worker.close();
  }
}

await runStandalone({ name: 'rollout', run: runRollout }, 'rollout-latest.json');
