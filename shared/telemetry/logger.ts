import { trace } from '@opentelemetry/api';
import { pino, type Logger } from 'pino';
import { redactCredentials } from '../contracts/redact-credentials.js';

/** trace_id/span_id of the active span (none when tracing is off: no context manager, no span). */
function traceFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/**
 * A log object's string fields (one level down too) with URL credentials redacted. One level only: a
 * logged object may be deep or cyclic (a job, a socket), and walking it all overflowed the stack.
 */
function redactFields(object: Record<string, unknown>, depth = 1): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(object)) {
    let clean = value;
    if (typeof value === 'string') clean = redactCredentials(value);
    else if (
      depth > 0 &&
      value !== null &&
      typeof value === 'object' &&
      !(value instanceof Error) &&
      !Array.isArray(value)
    )
      clean = redactFields(value as Record<string, unknown>, depth - 1);
    if (clean !== value) (copy ??= { ...object })[key] = clean;
  }
  return copy ?? object;
}

/** pino's error serializer, with URL credentials redacted from the message and stack (a driver's error may quote a URL). */
function serializeError(error: Error): ReturnType<typeof pino.stdSerializers.err> {
  const serialized = pino.stdSerializers.err(error);
  if (typeof serialized.message === 'string') serialized.message = redactCredentials(serialized.message);
  if (typeof serialized.stack === 'string') serialized.stack = redactCredentials(serialized.stack);
  return serialized;
}

/**
 * pino JSON on stderr: stdout belongs to the CLI's results. Secrets are redacted wherever they appear
 * under the usual names, and URL credentials (redactCredentials) wherever they appear in a message, a
 * field or an error.
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
      serializers: { err: serializeError, error: serializeError },
      formatters: { log: redactFields },
      hooks: {
        logMethod(args, method) {
          // The message (and printf-style arguments) are not fields: formatters.log never sees them.
          for (let index = 0; index < args.length; index += 1) {
            const value: unknown = args[index];
            if (typeof value === 'string') (args as unknown[])[index] = redactCredentials(value);
          }
          return method.apply(this, args);
        },
      },
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
