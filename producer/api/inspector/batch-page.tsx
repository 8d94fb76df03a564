import type { BatchRecord, BatchResult } from '../../../shared/operations/batches/batch-schema.js';
import { Layout, renderPage, type SignOut } from './layout.js';
import { formatCost } from './format.js';

const SEGMENTS = [
  ['completed', '#3cb371'],
  ['failed', '#d64545'],
  ['cancelled', '#9b7fd4'],
  ['running', '#2f6fde'],
] as const;

/** The progress bar: one segment per outcome, drawn in SVG (no inline style for the CSP to allow). */
function ProgressBar({ progress }: { progress: BatchRecord['progress'] }) {
  const total = Math.max(1, progress.total);
  let x = 0;
  return (
    <svg class="bar card" viewBox="0 0 100 1" preserveAspectRatio="none" role="img" aria-label="batch progress">
      {SEGMENTS.map(([label, color]) => {
        const count = progress[label];
        if (count <= 0) return null;
        const width = (100 * count) / total;
        const segment = (
          <rect x={x} y="0" width={width} height="1" fill={color}>
            <title>{`${count} ${label}`}</title>
          </rect>
        );
        x += width;
        return segment;
      })}
    </svg>
  );
}

/** A batch's provider batches (issue 38): calls waiting, cost at batch prices beside live, one row per provider batch. */
function ProviderBatches({ progress }: { progress: NonNullable<BatchRecord['providerBatch']> }) {
  return (
    <>
      <h2>Provider batches</h2>
      <div class="card facts" id="provider-batch">
        <div>
          <b>model calls waiting</b>
          <span id="parked">{progress.parked}</span>
          {` (${progress.pending} not yet in a provider batch)`}
        </div>
        <div>
          <b>tokens</b>
          {`${progress.usage.inputTokens} in / ${progress.usage.outputTokens} out`}
        </div>
        <div>
          <b>cost at batch prices</b>
          <span id="batch-cost">{formatCost(progress.costUsd)}</span>
        </div>
        <div>
          <b>the same, live</b>
          <span id="live-cost">{formatCost(progress.liveCostUsd)}</span>
        </div>
      </div>
      <table id="provider-batches">
        <tr>
          <th>provider batch</th>
          <th>status</th>
          <th>requests</th>
          <th>completed</th>
          <th>failed</th>
          <th>created</th>
        </tr>
        {progress.batches.map((entry) => (
          <tr class="provider-batch" data-status={entry.status}>
            <td>
              <code>{entry.id ?? entry.flush}</code>
            </td>
            <td>{entry.status}</td>
            <td>{entry.requests}</td>
            <td>{entry.requestCounts?.completed ?? ''}</td>
            <td>{entry.requestCounts?.failed ?? ''}</td>
            <td>{entry.createdAt}</td>
          </tr>
        ))}
      </table>
    </>
  );
}

/** A batch: progress, each question's status and answer, and the results to download. */
export function batchPage(
  batch: BatchRecord,
  results: readonly BatchResult[],
  { signOut = null }: { signOut?: SignOut | null } = {},
): string {
  const { progress } = batch;
  const id = encodeURIComponent(batch.id);
  const running = batch.status === 'running';
  return renderPage(
    <Layout title={`Batch ${batch.id}`} signOut={signOut} {...(running ? { refreshSeconds: 3 } : {})}>
      <h1>
        Batch <code>{batch.id}</code>
      </h1>
      <div class="card facts">
        <div>
          <b>status</b>
          <span class={`status status-${batch.status}`} id="batch-status">
            {batch.status}
          </span>
        </div>
        <div>
          <b>graph</b>
          {batch.graph}
        </div>
        <div>
          <b>collection</b>
          {batch.collection}
        </div>
        <div>
          <b>tenant</b>
          {batch.tenant}
        </div>
        <div>
          <b>created</b>
          {batch.createdAt}
        </div>
        <div>
          <b>progress</b>
          <span id="progress">{`${progress.completed + progress.failed + progress.cancelled} / ${progress.total}`}</span>
          {` done (${progress.failed} failed)`}
        </div>
      </div>
      <ProgressBar progress={progress} />
      {batch.providerBatch ? <ProviderBatches progress={batch.providerBatch} /> : null}
      <p>
        Download results:{' '}
        <a id="download-csv" href={`/batches/${id}/results.csv`}>
          CSV
        </a>{' '}
        ·{' '}
        <a id="download-jsonl" href={`/batches/${id}/results.jsonl`}>
          JSON Lines
        </a>
      </p>
      <table id="questions">
        <tr>
          <th>id</th>
          <th>question</th>
          <th>status</th>
          <th>run</th>
          <th>answer</th>
        </tr>
        {results.map((result) => (
          <tr class="question" data-status={result.status}>
            <td>{result.id}</td>
            <td>{result.question}</td>
            <td>
              <span class={`status status-${result.status}`}>{result.status}</span>
            </td>
            <td>
              <a href={`/runs/${encodeURIComponent(result.runId)}`}>{result.runId}</a>
            </td>
            <td>{result.answer ?? result.error?.message ?? ''}</td>
          </tr>
        ))}
      </table>
      {running ? <p class="muted">This page refreshes every 3 s while the batch runs.</p> : null}
    </Layout>,
  );
}
