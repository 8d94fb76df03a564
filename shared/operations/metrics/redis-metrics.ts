import type { RedisConnection } from '../../redis/connect-redis.js';
import { slotPipeline } from '../../store/slot-pipeline.js';
import { Keys } from '../../store/keys.js';
import { PrometheusText } from './prometheus-text.js';
import { CombinedIncrements } from './combined-increments.js';

/** Upper bounds (seconds) of the step duration histogram; fixed so every process adds to the same buckets. */
export const STEP_DURATION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600] as const;

/** What `render` needs of a queue: its name and its job counts (a BullMQ `Queue` fits). */
interface QueueCountsSource {
  readonly name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

const QUEUE_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'paused',
  'completed',
  'failed',
];
const FINISHED_STATUSES = ['completed', 'failed', 'cancelled'];
const ACTIVE_STATUSES = ['queued', 'running', 'waiting', 'cancelling'];
/** Active runs whose status is sampled per scrape; past this the gauge counts the oldest ones only. */
const ACTIVE_SAMPLE = 10_000;

/**
 * Metrics that workers and API processes share: counters live in Redis hashes (one per family, under
 * `<prefix>:metrics:*`), so any process can add to them and the API's `/metrics` renders the sum.
 * Each method is one round trip (MULTI where fields must move together).
 */
export class RedisMetrics {
  readonly keys: Keys;

  constructor(
    private readonly redis: RedisConnection,
    keyPrefix?: string,
    /** AGENTQ_SHARDS: where the active runs' metas are (the status gauge reads them). @default 1 */
    shards = 1,
  ) {
    this.keys = new Keys(keyPrefix, shards);
  }

  async stepCompleted(node: string, durationMs: number): Promise<void> {
    const seconds = Math.max(0, durationMs) / 1000;
    const bucket = STEP_DURATION_BUCKETS.find((bound) => seconds <= bound);
    const durations = this.keys.metrics('step-duration');
    // Two families, two keys (two Cluster slots): not one MULTI. A scrape between the writes may see a
    // step counted before its duration, which the next scrape squares.
    await slotPipeline(this.redis)
      .hincrby(this.keys.metrics('steps-completed'), node, 1)
      .hincrby(durations, field(node, bucket === undefined ? '+Inf' : String(bucket)), 1)
      .hincrbyfloat(durations, field(node, 'sum'), seconds)
      .hincrby(durations, field(node, 'count'), 1)
      .exec();
  }

  async stepFailed(node: string): Promise<void> {
    await this.redis.hincrby(this.keys.metrics('steps-failed'), node, 1);
  }

  async stepRetried(node: string): Promise<void> {
    await this.redis.hincrby(this.keys.metrics('steps-retried'), node, 1);
  }

  /** `version`: the graph and version the run ran, counted per version too (a rollout's two versions side by side). */
  async runFinished(
    status: 'completed' | 'failed' | 'cancelled',
    version?: { graph: string; graphVersion: string },
  ): Promise<void> {
    if (!version) {
      await this.redis.hincrby(this.keys.metrics('runs-finished'), status, 1);
      return;
    }
    await slotPipeline(this.redis)
      .hincrby(this.keys.metrics('runs-finished'), status, 1)
      .hincrby(
        this.keys.metrics('graph-runs-finished'),
        JSON.stringify([version.graph, version.graphVersion, status]),
        1,
      )
      .exec();
  }

  async usage(model: string, inputTokens: number, outputTokens: number, costUsd: number): Promise<void> {
    const key = this.keys.metrics('llm-usage');
    await this.redis
      .multi()
      .hincrby(key, field(model, 'input'), Math.round(inputTokens))
      .hincrby(key, field(model, 'output'), Math.round(outputTokens))
      .hincrbyfloat(key, field(model, 'cost'), costUsd)
      .exec();
  }

  /**
   * A tenant's counted model spend (TenantBudget.settle): `agentq_tenant_*_total{tenant}`. Counted on every
   * paid call, so calls at the same moment share a write (CombinedIncrements); each resolves once its own
   * spend is written.
   */
  tenantUsage(tenant: string, tokens: number, costUsd: number): Promise<void> {
    this.tenantUsageWrites ??= new CombinedIncrements(this.redis, this.keys.metrics('tenant-usage'));
    return this.tenantUsageWrites.add(
      { [field(tenant, 'tokens')]: Math.round(tokens) },
      { [field(tenant, 'cost')]: costUsd },
    );
  }

  private tenantUsageWrites: CombinedIncrements | undefined;

  /** Everything above plus active runs by status and each queue's job counts, as Prometheus text. */
  async render(queues: readonly QueueCountsSource[] = []): Promise<string> {
    const families = [
      'runs-finished',
      'steps-completed',
      'steps-failed',
      'steps-retried',
      'step-duration',
      'llm-usage',
      'tenant-usage',
      'graph-runs-finished',
    ];
    const pipeline = slotPipeline(this.redis);
    for (const family of families) pipeline.hgetall(this.keys.metrics(family));
    const replies = (await pipeline.exec()) ?? [];
    const hashes = replies.map(([error, value]) => {
      if (error) throw error;
      return value as Record<string, string>;
    });
    const [runsFinished, completed, failed, retried, durations, usage, tenantUsage, graphRuns] = hashes as [
      Record<string, string>,
      ...Record<string, string>[],
    ];
    const [{ statuses: activeStatuses, versions: activeVersions }, queueCounts] = await Promise.all([
      this.activeRuns(),
      Promise.all(queues.map(async (queue) => [queue.name, await queue.getJobCounts(...QUEUE_STATES)] as const)),
    ]);

    const text = new PrometheusText();
    text.family('agentq_runs_finished_total', 'counter', 'Runs that reached a terminal status, by status.');
    for (const status of FINISHED_STATUSES)
      text.sample('agentq_runs_finished_total', { status }, Number(runsFinished[status] ?? 0));
    text.family('agentq_runs_active', 'gauge', 'Runs not yet finished, by status.');
    for (const status of ACTIVE_STATUSES)
      text.sample('agentq_runs_active', { status }, activeStatuses.get(status) ?? 0);
    runsPerVersion(text, graphRuns!, activeVersions);
    counterByLabel(text, 'agentq_steps_completed_total', 'Steps committed, by node.', 'node', completed!);
    counterByLabel(
      text,
      'agentq_steps_failed_total',
      'Steps that failed their run after the retry policy was spent, by node.',
      'node',
      failed!,
    );
    counterByLabel(
      text,
      'agentq_steps_retried_total',
      'Step attempts that failed and were retried, by node.',
      'node',
      retried!,
    );
    histogram(text, durations!);
    text.family('agentq_llm_tokens_total', 'counter', 'Model tokens, by model and direction (input, output).');
    const models = groupFields(usage!);
    for (const [model, values] of models) {
      text.sample('agentq_llm_tokens_total', { model, direction: 'input' }, Number(values.get('input') ?? 0));
      text.sample('agentq_llm_tokens_total', { model, direction: 'output' }, Number(values.get('output') ?? 0));
    }
    text.family('agentq_llm_cost_usd_total', 'counter', 'Estimated model cost in US dollars, by model.');
    for (const [model, values] of models)
      text.sample('agentq_llm_cost_usd_total', { model }, Number(values.get('cost') ?? 0));
    const tenants = groupFields(tenantUsage!);
    text.family(
      'agentq_tenant_tokens_total',
      'counter',
      'Model tokens counted against each tenant budget (input + output), by tenant.',
    );
    for (const [tenant, values] of tenants)
      text.sample('agentq_tenant_tokens_total', { tenant }, Number(values.get('tokens') ?? 0));
    text.family(
      'agentq_tenant_cost_usd_total',
      'counter',
      'Estimated model cost counted against each tenant budget, in US dollars, by tenant.',
    );
    for (const [tenant, values] of tenants)
      text.sample('agentq_tenant_cost_usd_total', { tenant }, Number(values.get('cost') ?? 0));
    text.family(
      'agentq_queue_jobs',
      'gauge',
      'Jobs in each agentq queue, by state (the step queue summed over its shards).',
    );
    const byName = new Map<string, Record<string, number>>();
    for (const [queue, counts] of queueCounts) {
      const sum = byName.get(queue) ?? {};
      for (const state of QUEUE_STATES) sum[state] = (sum[state] ?? 0) + (counts[state] ?? 0);
      byName.set(queue, sum);
    }
    for (const [queue, counts] of byName) {
      for (const state of QUEUE_STATES) text.sample('agentq_queue_jobs', { queue, state }, counts[state] ?? 0);
    }
    return text.toString();
  }

  /** Active runs by status, and by `[graph, version]` (JSON; version '' while none is named or chosen). */
  private async activeRuns(): Promise<{ statuses: Map<string, number>; versions: Map<string, number> }> {
    const ids = await this.redis.zrange(this.keys.activeRuns(), '0', String(ACTIVE_SAMPLE - 1));
    const statuses = new Map<string, number>();
    const versions = new Map<string, number>();
    if (ids.length === 0) return { statuses, versions };
    // The runs' metas are on their shards' slots: one pipeline per slot on a Cluster.
    const pipeline = slotPipeline(this.redis);
    for (const id of ids) pipeline.hmget(this.keys.run(id).meta, 'status', 'graph', 'graphVersion');
    for (const [, fields] of (await pipeline.exec()) ?? []) {
      const [status, graph, version] = (fields ?? []) as (string | null)[];
      if (typeof status !== 'string' || !ACTIVE_STATUSES.includes(status)) continue;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      // A version is there once chosen: by the run, by the rollout at creation, or by the worker that took it in.
      const key = JSON.stringify([graph ?? '', version ?? '']);
      versions.set(key, (versions.get(key) ?? 0) + 1);
    }
    return { statuses, versions };
  }
}

/** `agentq_graph_runs_finished_total` and `agentq_graph_runs_active`, by graph and version. */
function runsPerVersion(text: PrometheusText, finished: Record<string, string>, active: Map<string, number>): void {
  text.family(
    'agentq_graph_runs_finished_total',
    'counter',
    'Runs that reached a terminal status, by graph, the version they ran and status.',
  );
  for (const key of Object.keys(finished).sort()) {
    const [graph, version, status] = JSON.parse(key) as [string, string, string];
    text.sample('agentq_graph_runs_finished_total', { graph, graph_version: version, status }, Number(finished[key]));
  }
  text.family(
    'agentq_graph_runs_active',
    'gauge',
    'Runs not yet finished, by graph and version ("" while a run has none yet: no rollout, not taken in).',
  );
  for (const key of [...active.keys()].sort()) {
    const [graph, version] = JSON.parse(key) as [string, string];
    text.sample('agentq_graph_runs_active', { graph, graph_version: version }, active.get(key)!);
  }
}

/** Hash field for a (label, part) pair; JSON so any node or model name round-trips. */
function field(label: string, part: string): string {
  return JSON.stringify([label, part]);
}

function groupFields(hash: Record<string, string>): Map<string, Map<string, string>> {
  const groups = new Map<string, Map<string, string>>();
  for (const [key, value] of Object.entries(hash)) {
    const [label, part] = JSON.parse(key) as [string, string];
    if (!groups.has(label)) groups.set(label, new Map());
    groups.get(label)!.set(part, value);
  }
  return new Map([...groups].sort(([a], [b]) => a.localeCompare(b)));
}

function counterByLabel(
  text: PrometheusText,
  name: string,
  help: string,
  label: string,
  hash: Record<string, string>,
): void {
  text.family(name, 'counter', help);
  for (const key of Object.keys(hash).sort()) text.sample(name, { [label]: key }, Number(hash[key]));
}

function histogram(text: PrometheusText, hash: Record<string, string>): void {
  const name = 'agentq_step_duration_seconds';
  text.family(name, 'histogram', 'Duration of committed steps (node execution to commit), by node.');
  for (const [node, values] of groupFields(hash)) {
    let cumulative = 0;
    for (const bound of STEP_DURATION_BUCKETS) {
      cumulative += Number(values.get(String(bound)) ?? 0);
      text.sample(`${name}_bucket`, { node, le: String(bound) }, cumulative);
    }
    const count = Number(values.get('count') ?? 0);
    text.sample(`${name}_bucket`, { node, le: '+Inf' }, count);
    text.sample(`${name}_sum`, { node }, Number(values.get('sum') ?? 0));
    text.sample(`${name}_count`, { node }, count);
  }
}
