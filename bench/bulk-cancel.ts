/**
 * `npm run bench:bulk-cancel`: a bulk cancel of 10,000 queued runs (`-- --quick`: 1,000), by two callers
 * racing (two operators, a person and a script), each through `client.cancelRuns` at `-- --rate N` a
 * second (default 1000). No worker runs: the runs stay queued. Uses REDIS_URL, or a private
 * redis-server when it is unset. Writes bench/results/bulk-cancel-latest.json.
 *
 * - `bulk_cancel_dry_run_ms`: listing and counting them (`dryRun`).
 * - `bulk_cancel_wall_ms`: both calls started → both returned; `bulk_cancel_runs_per_s` the runs over it.
 * - `bulk_cancel_cancelled_twice`: runs both calls report as cancelled by them, plus runs whose event
 *   stream holds more than one `run-end` (0 expected).
 * - `bulk_cancel_not_cancelled`: runs not `cancelled` afterwards (0 expected).
 */
import { randomBytes } from 'node:crypto';
import { AgentClient } from '../producer/client/agent-client.js';
import { loadConfig } from '../shared/config/config.js';
import type { BenchContext, BenchFigures } from './lib/bench-section.js';
import { runStandalone } from './lib/run-standalone.js';
import { round } from './lib/stats.js';

const rateArgument = process.argv.indexOf('--rate');
const RATE = rateArgument > 0 ? Number(process.argv[rateArgument + 1]) : 1000;

async function runBulkCancel({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const count = quick ? 1000 : 10_000;
  const id = randomBytes(3).toString('hex');
  const config = loadConfig({
    REDIS_URL: redisUrl,
    AGENTQ_KEY_PREFIX: `benchx${id}`,
    AGENTQ_QUEUE_PREFIX: `benchxq${id}`,
    AGENTQ_LOG_LEVEL: 'warn',
    EMBED_PROVIDER: 'none',
    // A producer's fail-fast bound, stretched: the enqueue burst before the measure may queue up in Redis.
    AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '30000',
    // 10,000 runs queued at once: above the default in-flight cap (1000) of a tenant.
    AGENTQ_TENANT_MAX_INFLIGHT: '20000',
  });
  const clients = [new AgentClient({ config }), new AgentClient({ config })];
  const [client, rival] = clients as [AgentClient, AgentClient];
  const figures: BenchFigures = { bulk_cancel_runs: count, bulk_cancel_rate_limit: RATE };
  try {
    const ids: string[] = [];
    for (let start = 0; start < count; start += 100) {
      const made = await Promise.all(
        Array.from({ length: Math.min(100, count - start) }, () => client.enqueue({ graph: 'idle', input: null })),
      );
      ids.push(...made.map((run) => run.id));
    }
    log(`${count} runs queued`);
    const dryStarted = performance.now();
    const dry = await client.cancelRuns({ status: 'queued' }, { dryRun: true, limit: count });
    figures.bulk_cancel_dry_run_ms = round(performance.now() - dryStarted);
    if (dry.matched !== count) throw new Error(`bench bulk-cancel: the dry run matched ${dry.matched} of ${count}`);

    const started = performance.now();
    const summaries = await Promise.all(
      [client, rival].map((each) => each.cancelRuns({ status: 'queued' }, { ratePerSecond: RATE, limit: count })),
    );
    const wallMs = performance.now() - started;
    figures.bulk_cancel_wall_ms = round(wallMs);
    figures.bulk_cancel_runs_per_s = round(count / (wallMs / 1000));
    const [first, second] = summaries.map((summary) => new Set([...summary.cancelled, ...summary.cancelling]));
    const both = [...first!].filter((runId) => second!.has(runId)).length;
    figures.bulk_cancel_cancelled_by_first = first!.size;
    figures.bulk_cancel_cancelled_by_second = second!.size;
    figures.bulk_cancel_errors = summaries.reduce((total, summary) => total + summary.errors.length, 0);
    log(`cancelled in ${Math.round(wallMs)} ms: ${first!.size} + ${second!.size}`);

    let twice = both;
    let notCancelled = 0;
    for (const runId of ids) {
      const [record, events] = await Promise.all([client.get(runId), client.store.eventLog.events(runId)]);
      if (record?.status !== 'cancelled') notCancelled += 1;
      if (events.filter((event) => event.type === 'run-end').length > 1) twice += 1;
    }
    figures.bulk_cancel_cancelled_twice = twice;
    figures.bulk_cancel_not_cancelled = notCancelled;
  } finally {
    await Promise.all(clients.map((each) => each.close()));
  }
  return figures;
}

await runStandalone({ name: 'bulk-cancel', run: runBulkCancel }, 'bulk-cancel-latest.json');
