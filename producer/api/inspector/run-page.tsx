import { stepJobId } from '../../../shared/contracts/job-schema.js';
import { STEP_QUEUE } from '../../../shared/contracts/queues.js';
import { shardOf, stepQueueBoardName } from '../../../shared/contracts/shards.js';
import type { RunMeta } from '../../../shared/store/redis-run-store.js';
import {
  isTerminal,
  type Message,
  type RunEvent,
  type RunRecord,
  type StepRecord,
} from '../../../shared/contracts/run-record.js';
import type { ListWindow } from '../../../shared/store/run-reads.js';
import { READ_BOUNDS } from '../read-bounds.js';
import type { ReplayReport } from '../../client/replay-report.js';
import { ActionForm } from './action-form.js';
import { formatCost, formatDuration } from './format.js';
import { Layout, renderPage } from './layout.js';
import { Json } from './clipped-json.js';
import { ListWindowNav, type RunPageWindows } from './list-window-nav.js';
import { PAGE_ASSETS } from './page-assets.js';
import { StepDetails, UsageTable } from './run-steps.js';
import { MessageView } from './run-transcript.js';
import { RunDiagram, type Path } from './run-diagram.js';
import { StepTimeline, timelineRows } from './step-timeline.js';
import { ParkedStepNotice } from './parked-step-notice.js';
import { TimeTravelPanel } from './time-travel-panel.js';
import { ChildRuns, ParentLink, type ChildrenWindow } from './run-family.js';

export interface RunPageData {
  record: RunRecord;
  meta: RunMeta;
  /** The window of its steps the page shows (the latest unless `windows.steps` names another). */
  steps: ListWindow<StepRecord>;
  /** Its latest events (READ_BOUNDS.pageEvents at most). */
  events: RunEvent[];
  /** The window of its history the transcript shows. */
  messages: ListWindow<Message>;
  /** The windows the page's URL asked for; none: the latest. */
  windows?: RunPageWindows;
  state: Record<string, unknown>;
  /** Paths of recent runs of the same graph (the diagram's other edges). */
  otherPaths: Path[];
  /** A notice to show: the result of this session's last action on the run (a flash, never from the URL). */
  notice?: string | null;
  /** The session's CSRF token for the action and sign-out forms; null for a Bearer caller or an open API. */
  csrf?: string | null;
  now: number;
  /** AGENTQ_TRACE_URL: where the trace id links (`{traceId}` replaced); plain text without. */
  traceUrl?: string | null;
  /** AGENTQ_SHARDS: which shard's step queue (Bull Board name) holds the run's jobs. @default 1 */
  shards?: number;
  /** A replay run's verdict (issue 39); null for other runs. */
  replayReport?: ReplayReport | null;
  /** A page of the child runs its steps started (the first unless the URL's `?children=` names another). */
  children?: ChildrenWindow | null;
}

/** The supersteps of a run as the nodes each ran (from its committed steps, or its timeline rows). */
export function pathOf(steps: readonly { superstep: number; node: string }[]): Path {
  const bySuperstep = new Map<number, string[]>();
  for (const step of steps) bySuperstep.set(step.superstep, [...(bySuperstep.get(step.superstep) ?? []), step.node]);
  return [...bySuperstep.entries()].sort(([left], [right]) => left - right).map(([, nodes]) => nodes);
}

function Citations({ output }: { output: unknown }) {
  const sources = (
    output as { sources?: { title?: string; path?: string; page?: number | null; score?: number }[] } | null
  )?.sources;
  if (!Array.isArray(sources) || sources.length === 0) return null;
  return (
    <>
      <h2>Citations</h2>
      <table class="citations">
        <tr>
          <th></th>
          <th>title</th>
          <th>path</th>
          <th>page</th>
          <th>score</th>
        </tr>
        {sources.map((source, index) => (
          <tr>
            <td>[{index + 1}]</td>
            <td>{String(source.title ?? '')}</td>
            <td>{String(source.path ?? '')}</td>
            <td>{String(source.page ?? '')}</td>
            <td>{typeof source.score === 'number' ? source.score.toFixed(3) : ''}</td>
          </tr>
        ))}
      </table>
    </>
  );
}

function Actions({ record, csrf }: { record: RunRecord; csrf: string | null }) {
  const base = `/runs/${encodeURIComponent(record.id)}`;
  const cancel = !isTerminal(record.status);
  const retry = record.status === 'failed';
  const resume = record.status === 'waiting';
  if (!cancel && !retry && !resume) return null;
  return (
    <div class="actions card">
      {cancel ? (
        <ActionForm action={`${base}/cancel`} csrf={csrf}>
          <button class="danger" id="cancel" type="submit">
            Cancel run
          </button>
        </ActionForm>
      ) : null}
      {retry ? (
        <ActionForm action={`${base}/retry`} csrf={csrf}>
          <button id="retry" type="submit">
            Retry from last commit
          </button>
        </ActionForm>
      ) : null}
      {resume ? (
        <>
          <ActionForm action={`${base}/resume`} csrf={csrf}>
            <label>
              Answer (JSON or text) <input name="value" id="resume-value" required />
            </label>{' '}
            <button id="resume" type="submit">
              Answer the interrupt
            </button>
          </ActionForm>
          <Json value={record.interrupt} max={READ_BOUNDS.pageTextChars} />
          {record.interrupt?.callbackUrl ? (
            <p id="interrupt-callback">
              Callback URL (answers without an API key, once, until {record.interrupt.callbackExpiresAt}):{' '}
              <code>{record.interrupt.callbackUrl}</code>
            </p>
          ) : null}
        </>
      ) : null}
    </div>
  );
}

/** The trace id: a link to the trace viewer (AGENTQ_TRACE_URL, an http(s) URL), or plain text. */
function TraceId({ traceId, traceUrl }: { traceId: string | undefined; traceUrl: string | null | undefined }) {
  if (traceId && traceUrl)
    return (
      <a id="trace-id" href={traceUrl.replace('{traceId}', encodeURIComponent(traceId))}>
        <code>{traceId}</code>
      </a>
    );
  return <code id="trace-id">{traceId || '–'}</code>;
}

/** The run's facts: status, graph, tenant, times, totals, trace and the BullMQ jobs of the shown steps. */
function RunFacts({ data, steps, duration }: { data: RunPageData; steps: readonly StepRecord[]; duration: number }) {
  const { record, meta } = data;
  const [traceId] = (meta.trace ?? '').split('-');
  const shards = data.shards ?? 1;
  const board = stepQueueBoardName(shardOf(record.id, shards), shards, STEP_QUEUE);
  return (
    <div class="card facts">
      <div>
        <b>status</b>
        <span class={`status status-${record.status}`} id="status">
          {record.status}
        </span>
      </div>
      <div>
        <b>graph</b>
        {record.graphVersion ? `${record.graph}@${record.graphVersion}` : record.graph}
      </div>
      <div>
        <b>tenant</b>
        {record.tenant}
      </div>
      <div>
        <b>started</b>
        {record.createdAt}
      </div>
      <div>
        <b>duration</b>
        {formatDuration(duration)}
      </div>
      <div>
        <b>steps</b>
        {record.stepCount}
      </div>
      <div>
        <b>tokens</b>
        <span id="tokens">{record.usage.inputTokens + record.usage.outputTokens}</span>
        {` (${record.usage.inputTokens} in${record.usage.cachedInputTokens ? `, ${record.usage.cachedInputTokens} of them cached` : ''} / ${record.usage.outputTokens} out)`}
      </div>
      <div>
        <b>cost</b>
        {formatCost(record.usage.costUsd)}
        {record.usage.cachedInputTokens
          ? ` (${formatCost(record.usage.uncachedCostUsd ?? record.usage.costUsd)} uncached)`
          : ''}
      </div>
      <ParentLink parentRunId={record.parentRunId} parentStep={record.parentStep} />
      <div>
        <b>trace id</b>
        <TraceId traceId={traceId} traceUrl={data.traceUrl} />
      </div>
      <div>
        <b>BullMQ jobs</b>
        {/* The shown steps' jobs only: a long run's would be a link per step it ever took. */}
        <a href={`/admin/queues/queue/${encodeURIComponent(board)}?status=completed`}>{board}</a>{' '}
        {steps.map((step) => (
          <>
            <a
              href={`/admin/queues/queue/${encodeURIComponent(board)}/${encodeURIComponent(stepJobId(record.id, step.superstep, step.task))}`}
            >
              {`s${step.superstep}.t${step.task}`}
            </a>{' '}
          </>
        ))}
      </div>
    </div>
  );
}

/** The sections the live script swaps in after each committed event. */
function Sections({ data }: { data: RunPageData }) {
  const { record, events, messages, state, otherPaths, now } = data;
  const steps = data.steps.items;
  const windows = data.windows ?? {};
  const created = Date.parse(record.createdAt);
  const rows = timelineRows(events, created);
  const shownRows = rows.slice(-READ_BOUNDS.pageTimelineRows);
  // This run's path from its events, so a step that started but has not committed (running, cancelled, failed) is on it.
  const path: Path = rows.length > 0 ? pathOf(rows) : pathOf(steps);
  const duration = (isTerminal(record.status) ? Date.parse(record.updatedAt) : now) - created;
  return (
    <div id="sections">
      <RunFacts data={data} steps={steps} duration={duration} />
      {record.error ? (
        <div class="card problem" id="error">
          <b>{record.error.code}</b>: {record.error.message}
        </div>
      ) : null}
      {isTerminal(record.status) ? null : <ParkedStepNotice events={events} />}
      <Actions record={record} csrf={data.csrf ?? null} />
      <ChildRuns runId={record.id} window={data.children} />
      <TimeTravelPanel
        record={record}
        stepCount={data.steps.total}
        report={data.replayReport ?? null}
        csrf={data.csrf ?? null}
      />
      <h2>Graph</h2>
      <div class="card">
        <RunDiagram path={path} others={otherPaths} />
        <p class="muted">
          Drawn from the steps this run and recent runs of {record.graph} took (the latest of a long run's); this run's
          path is blue.
        </p>
      </div>
      <h2>Timeline</h2>
      <div class="card">
        <StepTimeline rows={shownRows} now={now} />
        {shownRows.length < rows.length || data.steps.total > rows.length ? (
          <p class="muted">The latest tasks only: a long run's whole timeline is in its events and steps (API).</p>
        ) : null}
      </div>
      <h2>Tokens and cost</h2>
      <ListWindowNav
        name="steps"
        noun="steps"
        window={data.steps}
        size={READ_BOUNDS.pageSteps}
        windows={windows}
        runId={record.id}
      />
      <UsageTable steps={steps} record={record} />
      <h2>Transcript</h2>
      <ListWindowNav
        name="messages"
        noun="messages"
        window={messages}
        size={READ_BOUNDS.pageMessages}
        windows={windows}
        runId={record.id}
      />
      <div id="transcript">
        {messages.items.length > 0 ? (
          messages.items.map((message, index) => <MessageView message={message} index={messages.from + index} />)
        ) : (
          <p class="muted">No messages yet.</p>
        )}
      </div>
      <Citations output={record.output} />
      {record.output !== null ? (
        <>
          <h2>Output</h2>
          <Json value={record.output} max={READ_BOUNDS.pageStateChars} />
        </>
      ) : null}
      <h2>State</h2>
      <details class="card" id="state">
        <summary>Current state (after the last commit)</summary>
        <Json value={state} max={READ_BOUNDS.pageStateChars} />
      </details>
      <h2>Steps</h2>
      <div class="card">
        <StepDetails steps={steps} events={events} />
        <p class="muted">
          State is not stored per step: each step shows its record and its events; the state above is the last committed
          one. These are the steps of the usage table's window.
        </p>
      </div>
      <span id="last-event" data-id={events.at(-1)?.id ?? '0-0'} hidden />
    </div>
  );
}

/** The run inspector page. */
export function runPage(data: RunPageData): string {
  const { record, notice, csrf } = data;
  const terminal = isTerminal(record.status);
  return renderPage(
    <Layout
      title={`Run ${record.id}`}
      scripts={[PAGE_ASSETS.runLive.path]}
      signOut={csrf ? { action: '/runs/logout', csrf } : null}
    >
      <h1>
        Run <code>{record.id}</code>
      </h1>
      {notice ? (
        <div class="card" role="status" id="notice">
          {notice}
        </div>
      ) : null}
      <h2>Live output</h2>
      <div class="live" id="live">
        {terminal ? <span class="muted">The run has finished: its text is in the transcript below.</span> : null}
      </div>
      <Sections data={data} />
      <div id="run-config" data-run-id={record.id} data-terminal={String(terminal)} hidden />
    </Layout>,
  );
}
