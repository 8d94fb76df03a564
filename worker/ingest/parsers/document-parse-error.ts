import { AgentqError } from '../../../shared/contracts/errors.js';

/**
 * A document that cannot be indexed, and why: it fails alone (never retried, since the same bytes fail
 * the same way) and the reason goes into its record and the ingest result.
 */
export function unsupportedFormat(message: string): AgentqError {
  return new AgentqError('UNSUPPORTED_FORMAT', message, { retryable: false });
}

export function parseError(message: string, cause?: unknown): AgentqError {
  return new AgentqError('PARSE_ERROR', message, { retryable: false, ...(cause === undefined ? {} : { cause }) });
}
