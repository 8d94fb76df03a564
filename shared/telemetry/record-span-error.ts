import { SpanStatusCode, type Span } from '@opentelemetry/api';
import { toAgentqError } from '../contracts/errors.js';

/** Marks a span failed with the error's agentq code (`error.type`), the exception and an ERROR status. */
export function recordSpanError(span: Span, error: unknown): void {
  const agentqError = toAgentqError(error);
  span.setAttribute('error.type', agentqError.code);
  span.recordException(error as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: agentqError.message });
}
