import { trace } from '@opentelemetry/api';
import { pino, type Logger } from 'pino';

/** trace_id/span_id of the active span (none when tracing is off: no context manager, no span). */
function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/**
 * pino JSON on stderr: stdout belongs to the CLI's results. Secrets are redacted wherever they appear
 * under the usual names.
 */
export function createLogger(level = 'info', bindings: Record<string, unknown> = {}, destination: pino.DestinationStream = pino.destination({ dest: 2, sync: false })): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid, ...bindings },
      mixin: traceFields,
      redact: {
        paths: [
          'apiKey',
          '*.apiKey',
          'qdrantApiKey',
          '*.qdrantApiKey',
          'openaiApiKey',
          '*.openaiApiKey',
          'authorization',
          '*.authorization',
          'headers.authorization',
          'password',
          '*.password',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

export type { Logger };
