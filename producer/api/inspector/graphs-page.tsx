import type { GraphRollout } from '../../../shared/store/rollouts/graph-rollouts.js';
import { Layout, renderPage, type SignOut } from './layout.js';

/** One graph: the versions live workers serve, and which of them new runs get. */
export interface GraphRow {
  graph: string;
  served: string[];
  rollout: GraphRollout | undefined;
}

function Rollout({ rollout }: { rollout: GraphRollout | undefined }) {
  if (!rollout || (rollout.current === null && rollout.ramp === null))
    return <span class="muted">none: each worker runs its latest</span>;
  return (
    <>
      current <code>{rollout.current ?? 'latest'}</code>
      {rollout.ramp ? (
        <>
          {' · ramping '}
          <code>{rollout.ramp.version}</code> at {rollout.ramp.percent} %{rollout.ramp.percent === 0 ? ' (paused)' : ''}
        </>
      ) : null}
    </>
  );
}

/** `/graphs` (admin): each graph's served versions and its rollout (docs/guides/rolling-out-graph-versions.md). */
export function graphsPage(rows: readonly GraphRow[], { signOut = null }: { signOut?: SignOut | null } = {}): string {
  return renderPage(
    <Layout title="Graphs" signOut={signOut}>
      <h1>Graphs</h1>
      <p>
        Which version new runs get. Change it with <code>agentq graph rollout &lt;name&gt;</code> or{' '}
        <code>PUT /v1/graphs/:name/rollout</code>; runs already created keep theirs.
      </p>
      <table class="card" id="graphs">
        <thead>
          <tr>
            <th>graph</th>
            <th>versions served</th>
            <th>rollout</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr class="graph-row" data-graph={row.graph}>
              <td>
                <a href={`/runs?graph=${encodeURIComponent(row.graph)}`}>{row.graph}</a>
              </td>
              <td>{row.served.length > 0 ? row.served.join(', ') : <span class="muted">no live worker</span>}</td>
              <td class="rollout">
                <Rollout rollout={row.rollout} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Layout>,
  );
}
