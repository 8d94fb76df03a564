import type { RunStatus } from '../../../shared/contracts/run-record.js';
import type { ChildRunLink } from '../../../shared/contracts/run-record.js';

/** A window of a run's children as the run page shows them: the links, each child's status, the next page's cursor. */
export interface ChildrenWindow {
  children: (ChildRunLink & { status: RunStatus | null })[];
  total: number;
  /** The cursor of the page after this one (the page's `?children=`); null on the last. */
  nextCursor: string | null;
}

const runHref = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

/** The run that started this one (context.runGraph), linked; nothing for a run without a parent. */
export function ParentLink({ parentRunId, parentStep }: { parentRunId?: string; parentStep?: string }) {
  if (!parentRunId) return null;
  return (
    <div>
      <b>parent</b>
      <a id="parent-run" href={runHref(parentRunId)}>
        <code>{parentRunId}</code>
      </a>
      {parentStep ? ` (step ${parentStep})` : ''}
    </div>
  );
}

/** The child runs this run's steps started: one page, each linked, and a link to the next page. */
export function ChildRuns({ runId, window }: { runId: string; window: ChildrenWindow | null | undefined }) {
  if (!window || window.total === 0) return null;
  return (
    <>
      <h2>Child runs</h2>
      <table class="children" id="child-runs">
        <tr>
          <th>run</th>
          <th>graph</th>
          <th>status</th>
          <th>step</th>
          <th>waited</th>
        </tr>
        {window.children.map((child) => (
          <tr>
            <td>
              <a class="child-run" href={runHref(child.runId)}>
                <code>{child.runId}</code>
              </a>
            </td>
            <td>{child.graph}</td>
            <td>{child.status ?? 'missing'}</td>
            <td>{child.step}</td>
            <td>{child.wait ? 'yes' : 'no'}</td>
          </tr>
        ))}
      </table>
      <p class="muted">
        {`${window.children.length} of ${window.total} shown. `}
        {window.nextCursor ? (
          <a id="more-children" href={`${runHref(runId)}?children=${encodeURIComponent(window.nextCursor)}`}>
            More children
          </a>
        ) : null}
      </p>
    </>
  );
}
