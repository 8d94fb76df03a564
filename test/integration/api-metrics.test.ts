import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { agentqQueueNames } from '../../producer/api/agentq-queue-names.js';
import { RedisMetrics, STEP_DURATION_BUCKETS } from '../../shared/operations/metrics/redis-metrics.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { parsePrometheusText, type Family } from '../helpers/api-prometheus-parser.js';
import { eventually } from '../helpers/test-env.js';

const approval = defineGraph({ name: 'approval', state: { verdict: channel.replace('') } })
  .node('ask', (_state, context) => ({ verdict: String(context.interrupt<string>({ question: 'ok?' })) }))
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

function value(family: Family | undefined, labels: Record<string, string>, name = family?.name): number | undefined {
  return family?.samples.find(
    (sample) => sample.name === name && Object.entries(labels).every(([key, text]) => sample.labels[key] === text),
  )?.value;
}

describe('/metrics', () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [approval] });
  });
  afterAll(async () => env?.close());

  it('renders Prometheus text that parses: runs by status, steps, a step duration histogram, queue depths, tokens and cost', async () => {
    const enqueue = (body: object) =>
      env
        .as(KEYS.acmeProducer, { method: 'POST', url: '/v1/runs', payload: body })
        .then((response) => json(response).id as string);
    const completed = [
      await enqueue({ graph: 'chain', input: { steps: 2 } }),
      await enqueue({ graph: 'chain', input: { steps: 1 } }),
    ];
    const failed = await enqueue({ graph: 'chain', input: { steps: 'many' } });
    const waiting = await enqueue({ graph: 'approval', input: null });
    for (const id of [...completed, failed]) await env.client.wait(id);
    await eventually(async () => (await env.client.get(waiting))?.status === 'waiting');
    await env.as(KEYS.acmeProducer, { method: 'DELETE', url: `/v1/runs/${waiting}` });

    // What the step processor will report (the lead wires these calls in); any process adds to the same counters.
    const metrics = new RedisMetrics(env.client.store.redis, env.config.keyPrefix);
    const weird = 'we"ird\\node\nname';
    await metrics.stepCompleted('step', 4);
    await metrics.stepCompleted('step', 700);
    await metrics.stepCompleted('step', 3_600_000);
    await metrics.stepCompleted(weird, 20);
    await metrics.stepFailed('step');
    await metrics.stepRetried('step');
    await metrics.stepRetried('step');
    await metrics.usage('gpt-4o-mini', 1200, 300, 0.00036);
    await metrics.usage('gpt-4o-mini', 800, 200, 0.00024);

    const response = await env.as(KEYS.acmeAdmin, { method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const families = parsePrometheusText(response.body);
    for (const family of families.values()) {
      expect(family.help, family.name).toBeTruthy();
      expect(family.type, family.name).not.toBe('untyped');
      if (family.type === 'counter') expect(family.name).toMatch(/_total$/);
    }

    const runs = families.get('agentq_runs_finished_total');
    expect(value(runs, { status: 'completed' })).toBe(2);
    expect(value(runs, { status: 'failed' })).toBe(1);
    expect(value(runs, { status: 'cancelled' })).toBe(1);
    expect(families.get('agentq_runs_active')?.type).toBe('gauge');
    expect(value(families.get('agentq_runs_active'), { status: 'running' })).toBe(0);

    expect(value(families.get('agentq_steps_completed_total'), { node: 'step' })).toBe(3);
    expect(value(families.get('agentq_steps_completed_total'), { node: weird })).toBe(1);
    expect(value(families.get('agentq_steps_failed_total'), { node: 'step' })).toBe(1);
    expect(value(families.get('agentq_steps_retried_total'), { node: 'step' })).toBe(2);

    const durations = families.get('agentq_step_duration_seconds')!;
    expect(durations.type).toBe('histogram');
    const bucket = (le: string) => value(durations, { node: 'step', le }, 'agentq_step_duration_seconds_bucket');
    expect(bucket('0.01')).toBe(1);
    expect(bucket('1')).toBe(2);
    expect(bucket(String(STEP_DURATION_BUCKETS.at(-1)))).toBe(2);
    expect(bucket('+Inf')).toBe(3);
    expect(value(durations, { node: 'step' }, 'agentq_step_duration_seconds_count')).toBe(3);
    expect(value(durations, { node: 'step' }, 'agentq_step_duration_seconds_sum')).toBeCloseTo(3600.704, 6);

    expect(value(families.get('agentq_llm_tokens_total'), { model: 'gpt-4o-mini', direction: 'input' })).toBe(2000);
    expect(value(families.get('agentq_llm_tokens_total'), { model: 'gpt-4o-mini', direction: 'output' })).toBe(500);
    expect(value(families.get('agentq_llm_cost_usd_total'), { model: 'gpt-4o-mini' })).toBeCloseTo(0.0006, 9);

    const queues = families.get('agentq_queue_jobs')!;
    // Every queue of shared/contracts/queues.ts, whoever added it.
    expect(new Set(queues.samples.map((sample) => sample.labels.queue))).toEqual(new Set(agentqQueueNames()));
    expect(agentqQueueNames()).toEqual(expect.arrayContaining(['agentq-runs', 'agentq-steps', 'agentq-webhooks']));
    expect(value(queues, { queue: 'agentq-steps', state: 'completed' })).toBeGreaterThanOrEqual(3);
  });

  it('the test parser is strict: it rejects what Prometheus would', () => {
    const ok = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 1\n';
    expect(() => parsePrometheusText(ok)).not.toThrow();
    expect(() => parsePrometheusText(ok.trimEnd())).toThrow(/newline/);
    expect(() => parsePrometheusText(`${ok}a_total{x="1"} 2\n`)).toThrow(/duplicate series/);
    expect(() => parsePrometheusText('a_total 1\n# TYPE a_total counter\n')).toThrow(/after its samples/);
    expect(() => parsePrometheusText('# TYPE a counter\na{x="\\q"} 1\n')).toThrow(/bad escape/);
    expect(() => parsePrometheusText('# TYPE a gauge\na{x="1"} one\n')).toThrow(/not a number/);
    expect(() => parsePrometheusText('# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{y="2"} 1\n')).toThrow(/split/);
    const histogram = (buckets: string) => `# TYPE h histogram\n${buckets}h_sum 1\nh_count 2\n`;
    expect(() => parsePrometheusText(histogram('h_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\n'))).not.toThrow();
    expect(() => parsePrometheusText(histogram('h_bucket{le="1"} 3\nh_bucket{le="+Inf"} 2\n'))).toThrow(/cumulative/);
    expect(() => parsePrometheusText(histogram('h_bucket{le="1"} 1\nh_bucket{le="+Inf"} 1\n'))).toThrow(
      /differs from _count/,
    );
  });
});
