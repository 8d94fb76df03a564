import { randomBytes } from 'node:crypto';
import { context, isSpanContextValid, trace, TraceFlags, type Context, type Tracer } from '@opentelemetry/api';
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

/**
 * Tracing for agentq (docs/guides/observability.md): one trace per run, a root span `agent.run <graph>` and a child
 * span `agent.step <node>` per step, even though steps run in different jobs and processes.
 *
 * A run's trace id and root span id are chosen when the run is taken in and stored with the run; each
 * step span names that root as its (remote) parent. The root span itself is emitted once, by whichever
 * process ends the run, with the stored ids and the run's real start and end times — a span cannot stay
 * open across processes, but its record can be written at the end.
 *
 * Off unless an exporter is configured (OTEL_TRACES_EXPORTER, or an OTLP endpoint in
 * OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); when off nothing is created and
 * every call is a cheap no-op.
 */
export interface Telemetry {
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** For BullMQ queues and workers (`telemetry` option); undefined when off. */
  readonly bullmq: BullMQOtel | undefined;
  /** `<traceId>-<rootSpanId>` for a new run, or '' when off. */
  newRunTrace(): string;
  /** The context whose parent is the run's root span (ROOT context when the run has no trace). */
  runContext(runTrace: string | null | undefined): Context;
  /** Writes the run's root span with its stored ids. */
  emitRunSpan(run: RunSpanRecord): void;
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

interface RunSpanRecord {
  trace: string | null;
  runId: string;
  graph: string;
  graphVersion: string | null;
  status: string;
  stepCount: number;
  errorCode?: string | undefined;
  errorMessage?: string | undefined;
  startTime: number;
  endTime: number;
  /**
   * A child run's parent run and the step that started it (context.runGraph), and that step's span
   * (`<traceId>-<spanId>`, when it was traced) for the span link.
   */
  parent?: { runId: string; step: string; span?: string | null | undefined } | null | undefined;
}

interface TelemetryOptions {
  /** Service name on every span. @default 'agentq' */
  serviceName?: string;
  /** Use this exporter (tests: InMemorySpanExporter), with a simple (synchronous) processor. */
  exporter?: SpanExporter;
  /** The environment to read OTEL_* from. @default process.env */
  env?: NodeJS.ProcessEnv;
}

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

/** Which exporter the standard OTEL_* variables ask for; undefined = tracing off. */
function tracesExporterFromEnv(env: NodeJS.ProcessEnv): 'otlp' | 'console' | undefined {
  if (env.OTEL_SDK_DISABLED === 'true') return undefined;
  const named = env.OTEL_TRACES_EXPORTER?.split(',').map((name) => name.trim());
  if (named?.includes('none')) return undefined;
  if (named?.includes('otlp')) return 'otlp';
  if (named?.includes('console')) return 'console';
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return 'otlp';
  return undefined;
}

const disabled: Telemetry = {
  enabled: false,
  tracer: trace.getTracer('agentq-disabled'),
  bullmq: undefined,
  newRunTrace: () => '',
  runContext: () => context.active(),
  emitRunSpan: () => undefined,
  flush: async () => undefined,
  shutdown: async () => undefined,
};

let current: Telemetry | undefined;

/**
 * Starts tracing for this process once (later calls return the same instance). Without an exporter
 * configured it returns the disabled instance and registers nothing.
 */
export async function startTelemetry({
  serviceName = 'agentq',
  exporter,
  env = process.env,
}: TelemetryOptions = {}): Promise<Telemetry> {
  if (current) return current;
  const kind = exporter ? 'custom' : tracesExporterFromEnv(env);
  if (!kind) return disabled;
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
  current = {
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
      current = undefined;
    },
  };
  return current;
}

/**
 * `<traceId>-<spanId>` of the span active here (a step's, as its node runs), or null when nothing is
 * traced: a child run keeps it to link its own trace's root span back to the step that started it.
 */
export function activeSpanRef(): string | null {
  const span = trace.getActiveSpan()?.spanContext();
  return span && isSpanContextValid(span) ? `${span.traceId}-${span.spanId}` : null;
}

/** The telemetry started in this process, or the disabled instance. */
export function currentTelemetry(): Telemetry {
  return current ?? disabled;
}
