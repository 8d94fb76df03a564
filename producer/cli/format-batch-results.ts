import type { BatchResult } from '../../shared/operations/batches/batch-schema.js';

/** JSON Lines: one result per line, in question order. */
export function formatBatchResultsJsonl(results: BatchResult[]): string {
  return results.map((result) => JSON.stringify(result)).join('\n') + (results.length > 0 ? '\n' : '');
}

function csvField(value: unknown): string {
  const text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** CSV (RFC 4180) with a header: id, question, status, answer, sources (JSON), error_code, error_message, run_id. */
export function formatBatchResultsCsv(results: BatchResult[]): string {
  const header = ['id', 'question', 'status', 'answer', 'sources', 'error_code', 'error_message', 'run_id'];
  const rows = results.map((result) =>
    [
      result.id,
      result.question,
      result.status,
      result.answer,
      result.sources,
      result.error?.code,
      result.error?.message,
      result.runId,
    ]
      .map(csvField)
      .join(','),
  );
  return `${[header.join(','), ...rows].join('\r\n')}\r\n`;
}
