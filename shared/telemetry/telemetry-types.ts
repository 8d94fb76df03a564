import type { Context, Tracer } from '@opentelemetry/api';
import type { BullMQOtel } from 'bullmq-otel';

/** What startTelemetry (telemetry.ts) returns: the enabled instance (enabled-telemetry.ts) or the disabled one. */
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

export interface RunSpanRecord {
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
