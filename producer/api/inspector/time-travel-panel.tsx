import { isTerminal, type RunRecord } from '../../../shared/contracts/run-record.js';
import type { ReplayReport } from '../../client/replay-report.js';
import { ActionForm } from './action-form.js';

const runLink = (runId: string) => <a href={`/runs/${encodeURIComponent(runId)}`}>{runId}</a>;

/** A JSON value for a diff cell: strings as they are, the rest as JSON. */
const shown = (value: unknown) =>
  value === undefined ? '–' : typeof value === 'string' ? value : JSON.stringify(value);

/** Where a run comes from (fork, replay, retry), as links to the runs it names. */
function Lineage({ record }: { record: RunRecord }) {
  const { forkOf, replayOf, retryOf } = record;
  if (!forkOf && !replayOf && !retryOf) return null;
  return (
    <div class="card" id="lineage">
      {forkOf ? (
        <p id="fork-of">
          Forked from {runLink(forkOf.runId)} at step {forkOf.step}
          {forkOf.patched?.length ? ` (state patched: ${forkOf.patched.join(', ')})` : ''}; the steps before it are
          inherited.
        </p>
      ) : null}
      {replayOf ? (
        <p id="replay-of">
          Replay of {runLink(replayOf.runId)}
          {replayOf.live ? ', going on with live calls after a divergence' : ', answered from its recording'}.
        </p>
      ) : null}
      {retryOf ? (
        <p id="retry-of">
          Retried: {retryOf.attempts} earlier attempt{retryOf.attempts === 1 ? '' : 's'}; the last one failed
          {retryOf.error ? ` with ${retryOf.error.code}` : ''}
          {retryOf.failedAt ? ` at ${new Date(retryOf.failedAt).toISOString()}` : ''}.
        </p>
      ) : null}
    </div>
  );
}

/** A replay's verdict: same, or the first divergence with the diff of the two requests. */
function ReplayVerdict({ report }: { report: ReplayReport }) {
  return (
    <div class={`card${report.diverged ? ' problem' : ''}`} id="replay-report" data-outcome={report.outcome}>
      {report.outcome === 'same' ? <p>Same path, same calls, same output as the original.</p> : null}
      {report.outcome === 'pending' ? <p class="muted">The replay has not finished.</p> : null}
      {report.outcome === 'failed' ? (
        <p>
          The replay failed before any divergence: {report.error?.code}: {report.error?.message}
        </p>
      ) : null}
      {report.diverged ? (
        <>
          <p>
            Diverged at step <b id="replay-step">{report.step}</b> (node <code>{report.node}</code>, {report.reason})
            {report.continuedLive ? '; it went on with live calls' : ''}.
          </p>
          <table id="replay-diff">
            <tr>
              <th>where</th>
              <th>recorded</th>
              <th>replayed</th>
            </tr>
            {(report.diff ?? []).map((entry) => (
              <tr>
                <td>
                  <code>{entry.path}</code>
                </td>
                <td>
                  <pre>{shown(entry.recorded)}</pre>
                </td>
                <td>
                  <pre>{shown(entry.replayed)}</pre>
                </td>
              </tr>
            ))}
          </table>
        </>
      ) : null}
    </div>
  );
}

/** Fork from a step (a finished or waiting run) and replay (a finished run): forms posting to the run's actions. */
function TimeTravelForms({ record, stepCount, csrf }: { record: RunRecord; stepCount: number; csrf: string | null }) {
  const terminal = isTerminal(record.status);
  if (!terminal && record.status !== 'waiting') return null;
  const base = `/runs/${encodeURIComponent(record.id)}`;
  const last = record.status === 'completed' ? stepCount - 1 : stepCount;
  return (
    <div class="actions card" id="time-travel">
      {last >= 0 ? (
        <ActionForm action={`${base}/fork`} csrf={csrf} id="fork-form">
          <label>
            Fork from step{' '}
            <input name="step" id="fork-step" type="number" min="0" max={String(last)} value={String(last)} required />
          </label>{' '}
          <label>
            state patch (JSON object, optional) <input name="set" id="fork-set" placeholder='{"query": "…"}' />
          </label>{' '}
          <button id="fork" type="submit">
            Fork
          </button>
        </ActionForm>
      ) : null}
      {terminal ? (
        <ActionForm action={`${base}/replay`} csrf={csrf} id="replay-form">
          <label>
            graph version{' '}
            <input name="graphVersion" id="replay-version" placeholder={record.graphVersion ?? 'its own'} />
          </label>{' '}
          <label>
            <input type="checkbox" name="continueLive" value="true" id="replay-live" /> go on live after a divergence
          </label>{' '}
          <button id="replay" type="submit">
            Replay (recorded answers, no paid calls)
          </button>
        </ActionForm>
      ) : null}
    </div>
  );
}

/** Time travel on the run page (issue 39): lineage links, a replay's verdict, the fork and replay forms. */
export function TimeTravelPanel({
  record,
  stepCount,
  report,
  csrf,
}: {
  record: RunRecord;
  /** How many steps the run has committed (its list's length; the page reads only a window of them). */
  stepCount: number;
  report: ReplayReport | null;
  csrf: string | null;
}) {
  return (
    <>
      <Lineage record={record} />
      {report ? <ReplayVerdict report={report} /> : null}
      <TimeTravelForms record={record} stepCount={stepCount} csrf={csrf} />
    </>
  );
}
