import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { RUN_OUTCOME_STATUS, runOutcomeError } from '../../producer/api/run-outcome.js';

const failed = (code: string, details?: unknown): RunRecord =>
  ({
    id: 'run_1',
    status: 'failed',
    error: {
      code,
      message: `it failed with ${code}`,
      retryable: false,
      node: 'model',
      ...(details ? { details } : {}),
    },
  }) as unknown as RunRecord;

describe('the status of a run that did not complete', () => {
  it('maps the model-outcome codes by name: refusals and filters are the content (422), the rest the provider (502)', () => {
    const status = (code: string) => runOutcomeError(failed(code), 'rag-agent').statusCode;
    expect(['MODEL_REFUSED', 'CONTENT_FILTERED'].map(status)).toEqual([422, 422]);
    expect(['OUTPUT_TRUNCATED', 'EMPTY_RESPONSE', 'UNSUPPORTED_TOOL_CALL', 'PROVIDER_ERROR'].map(status)).toEqual([
      502, 502, 502, 502,
    ]);
    expect(status('TIMEOUT')).toBe(504);
    // A bug, or a code nobody mapped, stays a 500 with its own code.
    expect(runOutcomeError(failed('INTERNAL'), 'rag-agent')).toMatchObject({ statusCode: 500, code: 'INTERNAL' });
    expect(runOutcomeError(failed('SOMETHING_NEW'), 'rag-agent')).toMatchObject({
      statusCode: 500,
      code: 'SOMETHING_NEW',
    });
    // Expected ends of a run are not bugs.
    expect(['MAX_STEPS', 'DEADLINE', 'CONVERSATION_BUSY', 'PROVIDER_BATCH_RESULTS_UNAVAILABLE'].map(status)).toEqual([
      422, 504, 409, 502,
    ]);
  });

  it('a cancelled run is 409 CANCELLED; a failed run with no error recorded is 500 INTERNAL', () => {
    expect(runOutcomeError({ id: 'r', status: 'cancelled', error: null } as unknown as RunRecord, 'g')).toMatchObject({
      statusCode: 409,
      code: 'CANCELLED',
    });
    expect(runOutcomeError({ id: 'r', status: 'failed', error: null } as unknown as RunRecord, 'g')).toMatchObject({
      statusCode: 500,
      code: 'INTERNAL',
    });
  });

  it('every status of the table is on the HTTP API reference page, with its codes', () => {
    const page = readFileSync('docs/reference/http-api.md', 'utf8');
    const section = page.slice(page.indexOf("### When the chat's run does not complete"), page.indexOf('## Batches'));
    for (const [code, status] of Object.entries(RUN_OUTCOME_STATUS)) {
      const row = section.split('\n').find((line) => line.startsWith(`| ${status} |`));
      expect(row, `a row for ${status}`).toBeDefined();
      expect(row, `${code} in the ${status} row`).toContain(`\`${code}\``);
    }
  });
});
