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
export function createLogger(
  level = 'info',
  bindings: Record<string, unknown> = {},
  destination: pino.DestinationStream = pino.destination({ dest: 2, sync: false }),
): Logger {
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

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/**
 * `parent.child(bindings)`, made on first use. A step's logger is asked for on every step but mostly
 * never written to: pino's child() serialises and redacts its bindings up front, a few percent of a
 * worker's CPU per step. Calls at a disabled level return without making the child.
 */
export function lazyChild(parent: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  const noop = () => undefined;
  return new Proxy(parent, {
    get(_target, property) {
      if (typeof property === 'string' && LEVELS.has(property) && !parent.isLevelEnabled(property)) return noop;
      child ??= parent.child(bindings);
      const value: unknown = Reflect.get(child, property, child);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(child) : value;
    },
  });
}
