import { randomBytes } from 'node:crypto';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  RandomIdGenerator,
  SimpleSpanProcessor,
  type IdGenerator,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BullMQOtel } from 'bullmq-otel';
import type { Telemetry } from './telemetry-types.js';

/**
 * The tracing SDK's side of telemetry.ts, in a module of its own so that a process with tracing off
 * (most workers) never loads the SDK: startTelemetry imports it only when an exporter is configured.
 */

/** Lets the root span be written with the ids chosen when the run started. */
class RunAwareIdGenerator implements IdGenerator {
  forced: { traceId: string; spanId: string } | undefined;
  private readonly random = new RandomIdGenerator();

  generateTraceId(): string {
    return this.forced?.traceId ?? this.random.generateTraceId();
  }

  generateSpanId(): string {
    return this.forced?.spanId ?? this.random.generateSpanId();
  }
}

const TRACE_PATTERN = /^([0-9a-f]{32})-([0-9a-f]{16})$/;

/**
 * Registers a tracer provider exporting to `exporter` (`'console'`, `'otlp'`, or a given exporter with a
 * simple, synchronous processor) and returns the enabled telemetry; `onShutdown` runs after it shut down.
 */
export async function startTracing({
  exporter,
  kind,
  serviceName,
  env,
  onShutdown,
}: {
  exporter: SpanExporter | undefined;
  kind: 'otlp' | 'console' | 'custom';
  serviceName: string;
  env: NodeJS.ProcessEnv;
  onShutdown: () => void;
}): Promise<Telemetry> {
  let spanExporter: SpanExporter;
  if (exporter) spanExporter = exporter;
  else if (kind === 'console') spanExporter = new ConsoleSpanExporter();
  else {
    // Loaded only when tracing is on: the exporter pulls in the OTLP transformer and HTTP machinery.
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    spanExporter = new OTLPTraceExporter();
  }
  const idGenerator = new RunAwareIdGenerator();
  const provider = new NodeTracerProvider({
    idGenerator,
    resource: resourceFromAttributes({
      'service.name': env.OTEL_SERVICE_NAME ?? serviceName,
      'process.pid': process.pid,
    }),
    spanProcessors: [exporter ? new SimpleSpanProcessor(spanExporter) : new BatchSpanProcessor(spanExporter)],
  });
  provider.register();
  const tracer = provider.getTracer('agentq');
  return {
    enabled: true,
    tracer,
    bullmq: new BullMQOtel({ tracerName: 'agentq-bullmq' }),
    newRunTrace: () => `${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}`,
    runContext(runTrace) {
      const match = runTrace ? TRACE_PATTERN.exec(runTrace) : null;
      if (!match) return context.active();
      return trace.setSpanContext(context.active(), {
        traceId: match[1]!,
        spanId: match[2]!,
        traceFlags: TraceFlags.SAMPLED,
        isRemote: true,
      });
    },
    emitRunSpan(run) {
      const match = run.trace ? TRACE_PATTERN.exec(run.trace) : null;
      if (!match) return;
      const parentSpan = run.parent?.span ? TRACE_PATTERN.exec(run.parent.span) : null;
      idGenerator.forced = { traceId: match[1]!, spanId: match[2]! };
      // startSpan draws the forced ids synchronously; nothing can interleave.
      const span = tracer.startSpan(`agent.run ${run.graph}`, {
        root: true,
        startTime: run.startTime,
        attributes: {
          'agentq.run.id': run.runId,
          'agentq.graph': run.graph,
          'agentq.graph.version': run.graphVersion ?? '',
          'agentq.run.status': run.status,
          'agentq.run.step_count': run.stepCount,
          ...(run.errorCode ? { 'error.type': run.errorCode } : {}),
          // Its own trace, tied to the parent's by attribute: the parent's step span is in the parent's trace.
          ...(run.parent ? { 'agentq.parent_run_id': run.parent.runId, 'agentq.parent_step': run.parent.step } : {}),
        },
        // And by a span link to the parent's step span, which trace viewers follow across the two traces.
        ...(parentSpan
          ? {
              links: [
                {
                  context: {
                    traceId: parentSpan[1]!,
                    spanId: parentSpan[2]!,
                    traceFlags: TraceFlags.SAMPLED,
                    isRemote: true,
                  },
                },
              ],
            }
          : {}),
      });
      idGenerator.forced = undefined;
      if (run.status === 'failed') span.setStatus({ code: 2, message: run.errorMessage ?? run.errorCode ?? 'failed' });
      span.end(run.endTime);
    },
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown();
      onShutdown();
    },
  };
}
