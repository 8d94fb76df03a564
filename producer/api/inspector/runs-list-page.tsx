import { ERROR_CODES } from '../../../shared/contracts/errors.js';
import { RUN_STATUSES, isTerminal, type RunRecord } from '../../../shared/contracts/run-record.js';
import { formatCost, formatDuration } from './format.js';
import { Layout, renderPage, type SignOut } from './layout.js';

interface RunsListPageData {
  runs: RunRecord[];
  nextCursor: string | null;
  filter: { status?: string; graph?: string; errorCode?: string; tenant?: string };
  /** For an admin: every tenant, to pick one (or all). */
  tenants: string[] | null;
  now: number;
  /** The sign-out button of a session; none for a Bearer caller or an open API. */
  signOut?: SignOut | null;
}

function query(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value) params.set(name, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** The runs list: newest first, filtered by status, graph and error code (and tenant for an admin), paged. */
export function runsListPage({ runs, nextCursor, filter, tenants, now, signOut = null }: RunsListPageData): string {
  return renderPage(
    <Layout title="Runs" signOut={signOut}>
      <h1>Runs</h1>
      <form class="card" method="get" action="/runs">
        <select name="status" id="status-filter">
          {['', ...RUN_STATUSES].map((status) => (
            <option value={status} selected={filter.status === status}>
              {status || 'any status'}
            </option>
          ))}
        </select>{' '}
        <input name="graph" id="graph-filter" placeholder="graph" value={filter.graph ?? ''} />{' '}
        <select name="error" id="error-filter">
          {['', ...ERROR_CODES].map((code) => (
            <option value={code} selected={filter.errorCode === code}>
              {code || 'any error'}
            </option>
          ))}
        </select>{' '}
        {tenants ? (
          <select name="tenant" id="tenant-filter">
            <option value="">all tenants</option>
            {tenants.map((tenant) => (
              <option selected={filter.tenant === tenant}>{tenant}</option>
            ))}
          </select>
        ) : null}{' '}
        <button type="submit">Filter</button>
      </form>
      <table id="runs">
        <tr>
          <th>run</th>
          <th>status</th>
          <th>graph</th>
          <th>tenant</th>
          <th>started (UTC)</th>
          <th>duration</th>
          <th>tokens</th>
          <th>cost</th>
          <th>error</th>
        </tr>
        {runs.length === 0 ? (
          <tr>
            <td colSpan={9} class="muted">
              No runs.
            </td>
          </tr>
        ) : (
          runs.map((run) => {
            const duration = (isTerminal(run.status) ? Date.parse(run.updatedAt) : now) - Date.parse(run.createdAt);
            return (
              <tr class="run-row" data-run={run.id}>
                <td>
                  <a href={`/runs/${encodeURIComponent(run.id)}`}>{run.id}</a>
                </td>
                <td>
                  <span class={`status status-${run.status}`}>{run.status}</span>
                </td>
                <td>{run.graphVersion ? `${run.graph}@${run.graphVersion}` : run.graph}</td>
                <td>{run.tenant}</td>
                <td>{run.createdAt.replace('T', ' ').slice(0, 19)}</td>
                <td>{formatDuration(duration)}</td>
                <td>{run.usage.inputTokens + run.usage.outputTokens}</td>
                <td>{formatCost(run.usage.costUsd)}</td>
                <td>{run.error ? <code title={run.error.message}>{run.error.code}</code> : null}</td>
              </tr>
            );
          })
        )}
      </table>
      {nextCursor ? (
        <p>
          <a
            id="next-page"
            href={`/runs${query({ status: filter.status, graph: filter.graph, error: filter.errorCode, tenant: filter.tenant, cursor: nextCursor })}`}
          >
            Older runs →
          </a>
        </p>
      ) : null}
    </Layout>,
  );
}
