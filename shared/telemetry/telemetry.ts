import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { Telemetry } from './telemetry-types.js';

export type { Telemetry } from './telemetry-types.js';

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

interface TelemetryOptions {
  /** Service name on every span. @default 'agentq' */
  serviceName?: string;
  /** Use this exporter (tests: InMemorySpanExporter), with a simple (synchronous) processor. */
  exporter?: SpanExporter;
  /** The environment to read OTEL_* from. @default process.env */
  env?: NodeJS.ProcessEnv;
}

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
  // The SDK is loaded only when tracing is on: with it off, a worker starts without it.
  const { startTracing } = await import('./enabled-telemetry.js');
  current = await startTracing({
    exporter,
    kind,
    serviceName,
    env,
    onShutdown: () => (current = undefined),
  });
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
