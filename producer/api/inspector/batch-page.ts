import type { BatchRecord, BatchResult } from '../../../shared/operations/batches/batch-schema.js';
import { escapeHtml, page } from './html.js';

/** A batch: progress, each question's status and answer, and the results to download. */
export function batchPage(batch: BatchRecord, results: readonly BatchResult[]): string {
  const { progress } = batch;
  const total = Math.max(1, progress.total);
  const segment = (count: number, color: string, label: string) =>
    count > 0
      ? `<span style="width:${(100 * count) / total}%;background:${color}" title="${count} ${label}"></span>`
      : '';
  const rows = results
    .map(
      (result) =>
        `<tr class="question" data-status="${result.status}"><td>${escapeHtml(result.id)}</td><td>${escapeHtml(result.question)}</td><td><span class="status status-${result.status}">${result.status}</span></td><td><a href="/runs/${encodeURIComponent(result.runId)}">${escapeHtml(result.runId)}</a></td><td>${escapeHtml(result.answer ?? result.error?.message ?? '')}</td></tr>`,
    )
    .join('');
  const id = encodeURIComponent(batch.id);
  const body = `<h1>Batch <code>${escapeHtml(batch.id)}</code></h1>
<div class="card facts">
  <div><b>status</b><span class="status status-${batch.status}" id="batch-status">${escapeHtml(batch.status)}</span></div>
  <div><b>graph</b>${escapeHtml(batch.graph)}</div><div><b>collection</b>${escapeHtml(batch.collection)}</div>
  <div><b>tenant</b>${escapeHtml(batch.tenant)}</div><div><b>created</b>${escapeHtml(batch.createdAt)}</div>
  <div><b>progress</b><span id="progress">${progress.completed + progress.failed + progress.cancelled} / ${progress.total}</span> done (${progress.failed} failed)</div>
</div>
<div class="bar card" style="padding:0">${segment(progress.completed, '#3cb371', 'completed')}${segment(progress.failed, '#d64545', 'failed')}${segment(progress.cancelled, '#9b7fd4', 'cancelled')}${segment(progress.running, '#2f6fde', 'running')}</div>
<p>Download results: <a id="download-csv" href="/batches/${id}/results.csv">CSV</a> · <a id="download-jsonl" href="/batches/${id}/results.jsonl">JSON Lines</a></p>
<table id="questions"><tr><th>id</th><th>question</th><th>status</th><th>run</th><th>answer</th></tr>${rows}</table>
${batch.status === 'running' ? '<p class="muted">This page refreshes every 3 s while the batch runs.</p>' : ''}`;
  return page({
    title: `Batch ${batch.id}`,
    body,
    script: batch.status === 'running' ? 'setTimeout(function () { location.reload(); }, 3000);' : '',
  });
}
