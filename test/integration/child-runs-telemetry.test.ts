import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelemetry, type Telemetry } from '../../shared/telemetry/telemetry.js';
import { childDoubleGraph, parentSumGraph } from '../helpers/child-run-graphs.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

describe('child runs in traces', () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: Telemetry;
  let env: TestEnv;
  beforeAll(async () => {
    telemetry = await startTelemetry({ exporter });
    env = await startTestEnv({ telemetry, graphs: [childDoubleGraph(), parentSumGraph()] });
  });
  afterAll(async () => {
    await env?.close();
    await telemetry?.shutdown();
  });

  it("a child's agent.run span names its parent run and the parent's step", async () => {
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns: [2] } });
    expect((await env.client.wait(parent.id)).status).toBe('completed');
    const span = await eventually(async () =>
      exporter.getFinishedSpans().find((candidate) => candidate.name === 'agent.run child-double'),
    );
    expect(span.attributes).toMatchObject({ 'agentq.parent_run_id': parent.id, 'agentq.parent_step': 's0.t0' });
    const own = exporter.getFinishedSpans().find((candidate) => candidate.name === 'agent.run parent-sum');
    expect(own?.attributes['agentq.parent_run_id']).toBeUndefined();
  });

  it("a child's agent.run span links to the parent's agent.step span that started it", async () => {
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns: [3] } });
    expect((await env.client.wait(parent.id)).status).toBe('completed');
    const child = await eventually(async () =>
      exporter
        .getFinishedSpans()
        .find(
          (candidate) =>
            candidate.name === 'agent.run child-double' && candidate.attributes['agentq.parent_run_id'] === parent.id,
        ),
    );
    // The parent's step ran twice (it parks, then is woken); the link names the run that created the child.
    const steps = exporter
      .getFinishedSpans()
      .filter(
        (candidate) => candidate.name === 'agent.step call' && candidate.attributes['agentq.run.id'] === parent.id,
      );
    expect(steps.length).toBeGreaterThan(0);
    expect(child.links).toHaveLength(1);
    const link = child.links[0]!.context;
    const creator = steps.find((step) => step.spanContext().spanId === link.spanId);
    expect(creator).toBeDefined();
    expect(link.traceId).toBe(creator!.spanContext().traceId);
    // Its own trace still: the link is what ties the two, not a parent-child relation.
    expect(child.spanContext().traceId).not.toBe(link.traceId);
    expect(child.attributes).toMatchObject({ 'agentq.parent_step': 's0.t0' });
  });
});
