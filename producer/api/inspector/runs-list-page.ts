import { RUN_STATUSES, isTerminal, type RunRecord } from '../../../shared/contracts/run-record.js';
import { escapeHtml, formatCost, formatDuration, page } from './html.js';

export interface RunsListPageData {
  runs: RunRecord[];
  nextCursor: string | null;
  filter: { status?: string; graph?: string; tenant?: string };
  /** For an admin: every tenant, to pick one (or all). */
  tenants: string[] | null;
  now: number;
}

function query(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The runs list: newest first, filtered by status and graph (and tenant for an admin), paged. */
export function runsListPage({ runs, nextCursor, filter, tenants, now }: RunsListPageData): string {
  const statusOptions = ['', ...RUN_STATUSES]
    .map(
      (status) =>
        `<option value="${status}"${filter.status === status ? ' selected' : ''}>${status || 'any status'}</option>`,
    )
    .join('');
  const tenantSelect = tenants
    ? `<select name="tenant" id="tenant-filter"><option value="">all tenants</option>${tenants.map((tenant) => `<option${filter.tenant === tenant ? ' selected' : ''}>${escapeHtml(tenant)}</option>`).join('')}</select>`
    : '';
  const rows = runs
    .map((run) => {
      const duration = (isTerminal(run.status) ? Date.parse(run.updatedAt) : now) - Date.parse(run.createdAt);
      return `<tr class="run-row" data-run="${escapeHtml(run.id)}"><td><a href="/runs/${encodeURIComponent(run.id)}">${escapeHtml(run.id)}</a></td><td><span class="status status-${run.status}">${run.status}</span></td><td>${escapeHtml(run.graph)}</td><td>${escapeHtml(run.tenant)}</td><td>${escapeHtml(run.createdAt.replace('T', ' ').slice(0, 19))}</td><td>${formatDuration(duration)}</td><td>${run.usage.inputTokens + run.usage.outputTokens}</td><td>${formatCost(run.usage.costUsd)}</td></tr>`;
    })
    .join('');
  const next = nextCursor
    ? `<p><a id="next-page" href="/runs${query({ ...filter, cursor: nextCursor })}">Older runs →</a></p>`
    : '';
  const body = `<h1>Runs</h1>
<form class="card" method="get" action="/runs">
  <select name="status" id="status-filter">${statusOptions}</select>
  <input name="graph" id="graph-filter" placeholder="graph" value="${escapeHtml(filter.graph ?? '')}">
  ${tenantSelect}
  <button type="submit">Filter</button>
</form>
<table id="runs"><tr><th>run</th><th>status</th><th>graph</th><th>tenant</th><th>started (UTC)</th><th>duration</th><th>tokens</th><th>cost</th></tr>${rows || '<tr><td colspan="8" class="muted">No runs.</td></tr>'}</table>
${next}`;
  return page({ title: 'Runs', body });
}
