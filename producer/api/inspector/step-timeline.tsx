import type { RunEvent } from '../../../shared/contracts/run-record.js';
import { formatDuration } from './format.js';

/** One attempt of one step, in ms since the epoch. */
interface AttemptSpan {
  attempt: number;
  start: number;
  end: number | null;
  outcome: 'ok' | 'retry' | 'failed' | 'running';
  error?: string;
}

/** One task of one superstep: when it became ready and how each attempt went. */
interface TimelineRow {
  superstep: number;
  task: number;
  node: string;
  ready: number;
  attempts: AttemptSpan[];
}

/** A Redis Stream id's time part: when the event was written. */
export function eventTime(event: RunEvent): number {
  return Number.parseInt(event.id.split('-')[0] ?? '0', 10);
}

/**
 * The step timeline from the run's events (each carries its write time in its stream id): a task is
 * ready when its superstep's predecessor committed (the run's start for the first), then waits in the
 * queue until its first `step-start`; every attempt runs from its `step-start` to its `step-end`,
 * `step-retry` (the gap to the next attempt is the backoff) or the run's end.
 */
export function timelineRows(events: readonly RunEvent[], createdAt: number): TimelineRow[] {
  const rows = new Map<string, TimelineRow>();
  const readyAt = new Map<number, number>();
  let runStart = createdAt;
  let runEnd: { time: number; status: string } | null = null;
  for (const event of events) {
    const time = eventTime(event);
    const data = event.data as {
      superstep?: number;
      task?: number;
      node?: string;
      attempt?: number;
      error?: { message?: string };
      status?: string;
    };
    if (event.type === 'run-start') runStart = time;
    if (event.type === 'run-retry' || event.type === 'run-resume') readyAt.set(-1, time);
    if (event.type === 'step-start' && typeof data.superstep === 'number') {
      const key = `${data.superstep}.${data.task ?? 0}`;
      let row = rows.get(key);
      if (!row) {
        const previous = readyAt.get(data.superstep - 1);
        const resumed = readyAt.get(-1);
        row = {
          superstep: data.superstep,
          task: data.task ?? 0,
          node: data.node ?? '?',
          ready: Math.min(time, Math.max(previous ?? runStart, resumed ?? 0)),
          attempts: [],
        };
        rows.set(key, row);
      }
      row.attempts.push({
        attempt: data.attempt ?? row.attempts.length + 1,
        start: time,
        end: null,
        outcome: 'running',
      });
    }
    if (event.type === 'step-retry' || event.type === 'step-end') {
      const open = [...rows.values()].find(
        (row) =>
          row.superstep === data.superstep &&
          (data.task === undefined || row.task === data.task) &&
          (data.node === undefined || row.node === data.node) &&
          row.attempts.at(-1)?.end === null,
      );
      const attempt = open?.attempts.at(-1);
      if (attempt) {
        attempt.end = time;
        attempt.outcome = event.type === 'step-end' ? 'ok' : 'retry';
        if (data.error?.message) attempt.error = data.error.message;
      }
      if (event.type === 'step-end' && typeof data.superstep === 'number')
        readyAt.set(data.superstep, Math.max(readyAt.get(data.superstep) ?? 0, time));
    }
    if (event.type === 'run-end') runEnd = { time, status: String(data.status ?? '') };
  }
  if (runEnd) {
    for (const row of rows.values()) {
      const attempt = row.attempts.at(-1);
      if (attempt && attempt.end === null) {
        attempt.end = runEnd.time;
        attempt.outcome = 'failed';
      }
    }
  }
  return [...rows.values()].sort((left, right) => left.superstep - right.superstep || left.task - right.task);
}

const COLORS = { wait: '#c9d1dc', ok: '#2f6fde', retry: '#d64545', failed: '#d64545', running: '#f0a020' } as const;

/** The timeline as an SVG: a row per task, a grey bar for its queue wait, a coloured bar per attempt. */
export function StepTimeline({ rows, now }: { rows: readonly TimelineRow[]; now: number }) {
  if (rows.length === 0) return <p class="muted">No step has started yet.</p>;
  const start = Math.min(...rows.map((row) => row.ready));
  const end = Math.max(...rows.flatMap((row) => row.attempts.map((attempt) => attempt.end ?? now)), start + 1);
  const labelWidth = 190;
  const width = 900;
  const rowHeight = 24;
  const x = (time: number) => labelWidth + ((time - start) / (end - start)) * (width - labelWidth - 10);
  const height = 30 + rows.length * rowHeight;
  return (
    <>
      <svg class="timeline" role="img" aria-label="step timeline" width={width} height={height}>
        {rows.map((row, index) => {
          const y = 8 + index * rowHeight;
          const first = row.attempts[0]?.start ?? row.ready;
          const retries = row.attempts.length - 1;
          const label = `s${row.superstep}.t${row.task} ${row.node}${retries > 0 ? ` (${row.attempts.length} attempts)` : ''}`;
          return (
            <g class="timeline-row" data-step={`s${row.superstep}.t${row.task}`}>
              <text x="4" y={y + 15} font-size="12">
                {label}
              </text>
              <rect
                class="bar-wait"
                x={x(row.ready)}
                y={y + 4}
                width={Math.max(1, x(first) - x(row.ready))}
                height="12"
                fill={COLORS.wait}
              >
                <title>{`queue wait ${formatDuration(first - row.ready)}`}</title>
              </rect>
              {row.attempts.map((attempt) => {
                const stop = attempt.end ?? now;
                return (
                  <rect
                    class={`bar-exec bar-${attempt.outcome}`}
                    x={x(attempt.start)}
                    y={y + 2}
                    width={Math.max(2, x(stop) - x(attempt.start))}
                    height="16"
                    rx="2"
                    fill={COLORS[attempt.outcome]}
                  >
                    <title>{`attempt ${attempt.attempt}: ${attempt.outcome} after ${formatDuration(stop - attempt.start)}${attempt.error ? ` — ${attempt.error}` : ''}`}</title>
                  </rect>
                );
              })}
            </g>
          );
        })}
        <text x={labelWidth} y={height - 4} font-size="11" fill="#6b7482">
          0
        </text>
        <text x={width - 10} y={height - 4} font-size="11" fill="#6b7482" text-anchor="end">
          {formatDuration(end - start)}
        </text>
      </svg>
      <p class="muted">
        <span class="legend-wait">■</span> queue wait · <span class="legend-ok">■</span> execution ·{' '}
        <span class="legend-retry">■</span> failed attempt (retried) or failure · <span class="legend-running">■</span>{' '}
        running · gaps between attempts are backoff
      </p>
    </>
  );
}
