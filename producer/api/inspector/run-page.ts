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
import { escapeHtml, formatCost, formatDuration, page, scriptJson } from './html.js';
import { runDiagram, type Path } from './run-diagram.js';
import { stepTimeline, timelineRows } from './step-timeline.js';

export interface RunPageData {
  record: RunRecord;
  meta: RunMeta;
  steps: StepRecord[];
  events: RunEvent[];
  messages: Message[];
  state: Record<string, unknown>;
  /** Paths of recent runs of the same graph (the diagram's other edges). */
  otherPaths: Path[];
  /** A notice to show (the result of an action). */
  notice?: string;
  now: number;
  /** AGENTQ_TRACE_URL: where the trace id links (`{traceId}` replaced); plain text without. */
  traceUrl?: string | null;
  /** AGENTQ_SHARDS: which shard's step queue (Bull Board name) holds the run's jobs. @default 1 */
  shards?: number;
}

/** The supersteps of a run as the nodes each ran (from its committed steps, or its timeline rows). */
export function pathOf(steps: readonly { superstep: number; node: string }[]): Path {
  const bySuperstep = new Map<number, string[]>();
  for (const step of steps) bySuperstep.set(step.superstep, [...(bySuperstep.get(step.superstep) ?? []), step.node]);
  return [...bySuperstep.entries()].sort(([left], [right]) => left - right).map(([, nodes]) => nodes);
}

function json(value: unknown): string {
  return `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;
}

function messageHtml(message: Message, index: number): string {
  const calls = (message.tool_calls ?? [])
    .map((call) => {
      let args: unknown = call.function.arguments;
      try {
        args = JSON.parse(call.function.arguments);
      } catch {
        // Shown as sent.
      }
      return `<div class="tool-call"><b>→ ${escapeHtml(call.function.name)}</b> <span class="muted">${escapeHtml(call.id)}</span>${json(args)}</div>`;
    })
    .join('');
  const label =
    message.role === 'tool'
      ? `tool result <span class="muted">${escapeHtml(message.tool_call_id ?? '')}</span>`
      : escapeHtml(message.role);
  const content = message.content
    ? `<div class="content">${escapeHtml(message.content).replace(/\n/g, '<br>')}</div>`
    : '';
  return `<div class="msg msg-${escapeHtml(message.role)}" data-index="${index}"><div class="role">${label}</div>${content}${calls}</div>`;
}

function citations(output: unknown): string {
  const sources = (
    output as { sources?: { title?: string; path?: string; page?: number | null; score?: number }[] } | null
  )?.sources;
  if (!Array.isArray(sources) || sources.length === 0) return '';
  const rows = sources
    .map(
      (source, index) =>
        `<tr><td>[${index + 1}]</td><td>${escapeHtml(source.title)}</td><td>${escapeHtml(source.path)}</td><td>${escapeHtml(source.page ?? '')}</td><td>${escapeHtml(source.score?.toFixed?.(3) ?? '')}</td></tr>`,
    )
    .join('');
  return `<h2>Citations</h2><table class="citations"><tr><th></th><th>title</th><th>path</th><th>page</th><th>score</th></tr>${rows}</table>`;
}

function usageTable(steps: readonly StepRecord[], record: RunRecord): string {
  const rows = steps
    .map((step) => {
      const usage = step.usage;
      return `<tr><td>${step.index}</td><td>s${step.superstep}.t${step.task}</td><td>${escapeHtml(step.node)}</td><td>${step.attempts}</td><td>${formatDuration(Date.parse(step.endedAt) - Date.parse(step.startedAt))}</td><td>${usage ? usage.inputTokens : ''}</td><td>${usage ? usage.outputTokens : ''}</td><td>${usage ? formatCost(usage.costUsd) : ''}</td><td>${escapeHtml(usage?.model ?? '')}</td></tr>`;
    })
    .join('');
  const total = `<tr><th colspan="5">total</th><th>${record.usage.inputTokens}</th><th>${record.usage.outputTokens}</th><th>${formatCost(record.usage.costUsd)}</th><th></th></tr>`;
  return `<table class="usage"><tr><th>#</th><th>step</th><th>node</th><th>attempts</th><th>execution</th><th>input tokens</th><th>output tokens</th><th>cost</th><th>model</th></tr>${rows}${total}</table>`;
}

function stepDetails(steps: readonly StepRecord[], events: readonly RunEvent[]): string {
  return steps
    .map((step) => {
      const own = events.filter((event) => {
        const data = event.data as { superstep?: number; task?: number };
        return (
          data.superstep === step.superstep &&
          (data.task === undefined || data.task === step.task) &&
          event.type !== 'step-start'
        );
      });
      return `<details class="step-detail"><summary>s${step.superstep}.t${step.task} ${escapeHtml(step.node)} — ${step.attempts} attempt${step.attempts === 1 ? '' : 's'}</summary>${json({ step, events: own.map(({ type, data }) => ({ type, data })) })}</details>`;
    })
    .join('');
}

function actions(record: RunRecord): string {
  const id = encodeURIComponent(record.id);
  const cancel = isTerminal(record.status)
    ? ''
    : `<form method="post" action="/runs/${id}/cancel"><button class="danger" id="cancel" type="submit">Cancel run</button></form>`;
  const retry =
    record.status === 'failed'
      ? `<form method="post" action="/runs/${id}/retry"><button id="retry" type="submit">Retry from last commit</button></form>`
      : '';
  const resume =
    record.status === 'waiting'
      ? `<form method="post" action="/runs/${id}/resume"><label>Answer (JSON or text) <input name="value" id="resume-value" required></label> <button id="resume" type="submit">Answer the interrupt</button></form>${json(record.interrupt)}`
      : '';
  return cancel || retry || resume ? `<div class="actions card">${cancel}${retry}${resume}</div>` : '';
}

/** The sections the live script swaps in after each committed event. */
function sections(data: RunPageData): string {
  const { record, meta, steps, events, messages, state, otherPaths, now } = data;
  const created = Date.parse(record.createdAt);
  const rows = timelineRows(events, created);
  // This run's path from its events, so a step that started but has not committed (running, cancelled, failed) is on it.
  const path: Path = rows.length > 0 ? pathOf(rows) : pathOf(steps);
  const duration = (isTerminal(record.status) ? Date.parse(record.updatedAt) : now) - created;
  const [traceId] = (meta.trace ?? '').split('-');
  const shards = data.shards ?? 1;
  const board = stepQueueBoardName(shardOf(record.id, shards), shards, STEP_QUEUE);
  const stepLinks = steps
    .map(
      (step) =>
        `<a href="/admin/queues/queue/${board}/${encodeURIComponent(stepJobId(record.id, step.superstep, step.task))}">s${step.superstep}.t${step.task}</a>`,
    )
    .join(' ');
  return `<div id="sections">
<div class="card facts">
  <div><b>status</b><span class="status status-${record.status}" id="status">${record.status}</span></div>
  <div><b>graph</b>${escapeHtml(record.graph)}${record.graphVersion ? `@${escapeHtml(record.graphVersion)}` : ''}</div>
  <div><b>tenant</b>${escapeHtml(record.tenant)}</div>
  <div><b>started</b>${escapeHtml(record.createdAt)}</div>
  <div><b>duration</b>${formatDuration(duration)}</div>
  <div><b>steps</b>${record.stepCount}</div>
  <div><b>tokens</b><span id="tokens">${record.usage.inputTokens + record.usage.outputTokens}</span> (${record.usage.inputTokens} in / ${record.usage.outputTokens} out)</div>
  <div><b>cost</b>${formatCost(record.usage.costUsd)}</div>
  <div><b>trace id</b>${traceId && data.traceUrl ? `<a id="trace-id" href="${escapeHtml(data.traceUrl.replace('{traceId}', encodeURIComponent(traceId)))}"><code>${escapeHtml(traceId)}</code></a>` : `<code id="trace-id">${escapeHtml(traceId || '–')}</code>`}</div>
  <div><b>BullMQ jobs</b><a href="/admin/queues/queue/${board}?status=completed">${board}</a> ${stepLinks}</div>
</div>
${record.error ? `<div class="card problem" id="error"><b>${escapeHtml(record.error.code)}</b>: ${escapeHtml(record.error.message)}</div>` : ''}
${actions(record)}
<h2>Graph</h2>
<div class="card">${runDiagram(path, otherPaths)}<p class="muted">Drawn from the steps this run and recent runs of ${escapeHtml(record.graph)} took; this run's path is blue.</p></div>
<h2>Timeline</h2>
<div class="card">${stepTimeline(rows, now)}</div>
<h2>Tokens and cost</h2>
${usageTable(steps, record)}
<h2>Transcript</h2>
<div id="transcript">${messages.map(messageHtml).join('') || '<p class="muted">No messages yet.</p>'}</div>
${citations(record.output)}
${record.output !== null ? `<h2>Output</h2>${json(record.output)}` : ''}
<h2>State</h2>
<details class="card" id="state"><summary>Current state (after the last commit)</summary>${json(state)}</details>
<h2>Steps</h2>
<div class="card">${stepDetails(steps, events) || '<p class="muted">No committed step yet.</p>'}<p class="muted">State is not stored per step: each step shows its record and its events; the state above is the last committed one.</p></div>
<span id="last-event" data-id="${escapeHtml(events.at(-1)?.id ?? '0-0')}" hidden></span>
</div>`;
}

/** The live part: tokens as they stream, and the sections re-rendered after each committed event. */
const LIVE_SCRIPT = `
(function () {
  var config = JSON.parse(document.getElementById('run-config').textContent);
  var live = document.getElementById('live');
  var parts = {};
  function box(key, label) {
    if (!parts[key]) {
      var wrap = document.createElement('div');
      wrap.className = 'live-part';
      wrap.dataset.step = key;
      var title = document.createElement('div');
      title.className = 'muted';
      title.textContent = label;
      var text = document.createElement('span');
      text.className = 'live-text';
      wrap.appendChild(title);
      wrap.appendChild(text);
      live.appendChild(wrap);
      parts[key] = text;
    }
    return parts[key];
  }
  var refreshing = false, again = false;
  function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    fetch(location.pathname, { credentials: 'same-origin' }).then(function (response) { return response.text(); }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, 'text/html');
      var fresh = doc.getElementById('sections');
      var openState = document.getElementById('state') && document.getElementById('state').open;
      if (fresh) document.getElementById('sections').replaceWith(fresh);
      if (openState) document.getElementById('state').open = true;
    }).finally(function () { refreshing = false; if (again) { again = false; refresh(); } });
  }
  if (config.terminal) return;
  var after = document.getElementById('last-event').dataset.id;
  var source = new EventSource('/runs/' + encodeURIComponent(config.runId) + '/events?after=' + encodeURIComponent(after));
  source.addEventListener('token-reset', function (event) {
    var data = JSON.parse(event.data);
    box('s' + data.step + '.t' + data.task, 's' + data.step + '.t' + data.task + ' ' + data.node + ' (attempt ' + data.attempt + ')').textContent = '';
  });
  source.addEventListener('token', function (event) {
    var data = JSON.parse(event.data);
    box('s' + data.step + '.t' + data.task, 's' + data.step + '.t' + data.task + ' ' + data.node + ' (attempt ' + data.attempt + ')').textContent += data.text;
  });
  ['step-start', 'step-end', 'step-retry', 'tool-call', 'tool-result', 'run-waiting', 'run-retry', 'run-resume', 'step-deferred'].forEach(function (type) {
    source.addEventListener(type, refresh);
  });
  source.addEventListener('run-end', function () { source.close(); refresh(); });
})();
`;

/** The run inspector page. */
export function runPage(data: RunPageData): string {
  const { record, notice } = data;
  const body = `<h1>Run <code>${escapeHtml(record.id)}</code></h1>
${notice ? `<div class="card" role="status">${escapeHtml(notice)}</div>` : ''}
<h2>Live output</h2>
<div class="live" id="live">${isTerminal(record.status) ? '<span class="muted">The run has finished: its text is in the transcript below.</span>' : ''}</div>
${sections(data)}
<script type="application/json" id="run-config">${scriptJson({ runId: record.id, terminal: isTerminal(record.status) })}</script>`;
  return page({ title: `Run ${record.id}`, body, script: LIVE_SCRIPT });
}
