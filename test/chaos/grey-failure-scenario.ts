import type { ChildProcess } from 'node:child_process';
import { AgentClient } from '../../producer/client/agent-client.js';
import type { Config } from '../../shared/config/config.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { auditRun } from '../helpers/run-audit.js';
import { startSilencingTcpProxy } from '../helpers/silencing-tcp-proxy.js';
import { waitForRuns } from '../helpers/wait-for-runs.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';
import { MODEL_STEPS_GRAPH } from './workers-killed-graph.js';
import { startModelStepsServer } from './workers-killed-model-server.js';
import { MODEL_STEPS_WORKER, modelStepsWorkerEnv } from './workers-killed-worker-env.js';

export interface GreyFailureOptions {
  config: Config;
  runs: number;
  steps: number;
  /** How long the first worker's data connections stay silent, at least (they stay so until every run ends or this passes). */
  silenceMs: number;
  seed: number;
  /** Log lines of the silenced worker (stderr), for the test's checks. */
  onSilencedLog?: (text: string) => void;
}

export interface GreyFailureOutcome {
  records: RunRecord[];
  /** Runs not finished when the silence ended. */
  stuck: number;
  /** From the silence to the last run's end, or undefined when some run did not end within it. */
  takeoverMs: number | undefined;
  /** Steps with more than one commit, over all runs. */
  committedTwice: number;
  /** Model requests beyond the first for a (run, step). */
  paidTwice: number;
  problems: string[];
}

/** The prefix of the liveness thread's connection name (liveness-beat.ts): the proxy spares it. */
const LIVENESS_CONNECTION = 'agentq-liveness-';

/**
 * A grey failure: worker A reaches Redis through a proxy that, once `runs` model-calling runs are in
 * flight on it, silences every connection of A's but its liveness thread's (sockets open, nothing
 * forwarded either way). Worker B, on Redis directly, starts then. The silence ends once every run has
 * ended, or after `silenceMs` (the runs still going then are stuck); then A's held commands reach Redis
 * (a late commit must be refused by the fences) and a few seconds are given for them to land before the
 * runs are audited.
 */
export async function runGreyFailure({
  config,
  runs,
  steps,
  silenceMs,
  seed,
  onSilencedLog,
}: GreyFailureOptions): Promise<GreyFailureOutcome> {
  const client = new AgentClient({ config });
  const model = await startModelStepsServer({ seed, latencyMs: [50, 300] });
  const proxy = await startSilencingTcpProxy(Number(new URL(config.redisUrl!).port), LIVENESS_CONNECTION);
  const workers: ChildProcess[] = [];
  try {
    const env = modelStepsWorkerEnv(config, model.server.url);
    const proxied = { ...env, REDIS_URL: `redis://127.0.0.1:${proxy.port}`, AGENTQ_LOG_LEVEL: 'info' };
    workers.push(await spawnWorker(MODEL_STEPS_WORKER, proxied, { onStderr: onSilencedLog ?? (() => undefined) }));
    const enqueued = await Promise.all(
      Array.from({ length: runs }, (_, index) =>
        client.enqueue({ graph: MODEL_STEPS_GRAPH, input: { steps }, runId: `grey-${seed}-${index}` }),
      ),
    );
    const runIds = enqueued.map((run) => run.id);
    // Silence once A is mid-run: model requests of its have reached the server.
    const pidA = workers[0]!.pid!;
    while (model.calls().filter((call) => call.pid === pidA).length < Math.min(runs, config.concurrency))
      await new Promise((resolve) => setTimeout(resolve, 20));
    proxy.silence();
    const silencedAt = Date.now();
    workers.push(await spawnWorker(MODEL_STEPS_WORKER, env));
    let records: RunRecord[] | undefined;
    let takeoverMs: number | undefined;
    try {
      records = await waitForRuns(client, runIds, { timeoutMs: silenceMs });
      takeoverMs = Date.now() - silencedAt;
    } catch {
      // Stuck: counted below, once the silence is over.
    }
    const stuck = records ? 0 : (await Promise.all(runIds.map((id) => client.get(id)))).filter(unfinished).length;
    proxy.resume();
    // A's commands held by the silence reach Redis now: give them time to land (or be refused).
    records = await waitForRuns(client, runIds, { timeoutMs: silenceMs });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const audits = await Promise.all(runIds.map((runId) => auditRun(client, runId, { supersteps: steps })));
    return {
      records,
      stuck,
      takeoverMs,
      committedTwice: audits.reduce((sum, audit) => sum + audit.committedTwice.length, 0),
      paidTwice: model.duplicateCalls(),
      problems: audits.flatMap((audit) => audit.problems),
    };
  } finally {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await proxy.close();
    await model.close();
    await client.close();
  }
}

function unfinished(record: RunRecord | null | undefined): boolean {
  return !record || !['completed', 'failed', 'cancelled'].includes(record.status);
}
