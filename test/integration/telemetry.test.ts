import { Writable } from 'node:stream';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startTelemetry, type Telemetry } from '../../shared/telemetry/telemetry.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

describe('tracing and logs in one process', () => {
  const exporter = new InMemorySpanExporter();
  const lines: Record<string, unknown>[] = [];
  let telemetry: Telemetry;
  let env: TestEnv;
  beforeAll(async () => {
    telemetry = await startTelemetry({ exporter });
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as Record<string, unknown>);
        callback();
      },
    });
    env = await startTestEnv({ telemetry, logger: createLogger('debug', {}, sink) });
  });
  afterAll(async () => {
    await env.close();
    await telemetry.shutdown();
  });

  it('gives a run one trace: a root span agent.run and a child agent.step per step', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 3 } });
    await env.client.wait(queued.id);
    // The root span is written at the final commit, and the last step span just after it: wait for both.
    const ofRun = (name: string) =>
      exporter
        .getFinishedSpans()
        .filter((span) => span.name === name && span.attributes['agentq.run.id'] === queued.id);
    await eventually(async () => ofRun('agent.run chain').length === 1 && ofRun('agent.step step').length === 3);
    const spans = exporter.getFinishedSpans();
    const roots = spans.filter(
      (span) => span.name === 'agent.run chain' && span.attributes['agentq.run.id'] === queued.id,
    );
    expect(roots).toHaveLength(1);
    const root = roots[0]!;
    const steps = spans.filter(
      (span) => span.name === 'agent.step step' && span.attributes['agentq.run.id'] === queued.id,
    );
    expect(steps).toHaveLength(3);
    for (const step of steps) {
      expect(step.spanContext().traceId).toBe(root.spanContext().traceId);
      expect(step.parentSpanContext?.spanId).toBe(root.spanContext().spanId);
    }
    expect(steps.map((step) => step.attributes['agentq.step.superstep']).sort()).toEqual([0, 1, 2]);
    expect(root.attributes['agentq.run.status']).toBe('completed');
    // BullMQ's own spans (bullmq-otel) land in the same trace.
    expect(
      spans.some(
        (span) => span.spanContext().traceId === root.spanContext().traceId && !span.name.startsWith('agent.'),
      ),
    ).toBe(true);
  });

  it('log lines of a step carry runId, stepIndex and the trace id', async () => {
    const queued = await env.client.enqueue({ graph: 'chain', input: { steps: 2 } });
    await env.client.wait(queued.id);
    const root = await eventually(async () =>
      exporter
        .getFinishedSpans()
        .find((span) => span.name === 'agent.run chain' && span.attributes['agentq.run.id'] === queued.id),
    );
    const ofRun = () => lines.filter((line) => line.runId === queued.id && line.msg === 'step committed');
    const stepLines = await eventually(async () => ofRun().length === 2 && ofRun());
    expect(stepLines.map((line) => line.stepIndex)).toEqual([0, 1]);
    for (const line of stepLines) {
      expect(line.trace_id).toBe(root.spanContext().traceId);
      expect(typeof line.span_id).toBe('string');
    }
  });
});
