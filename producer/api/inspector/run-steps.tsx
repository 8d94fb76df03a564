import type { RunEvent, RunRecord, StepRecord } from '../../../shared/contracts/run-record.js';
import { READ_BOUNDS } from '../read-bounds.js';
import { Json } from './clipped-json.js';
import { formatCost, formatDuration } from './format.js';

/** The shown steps' usage, one row each, and the whole run's total (from its record, not a sum of the rows). */
export function UsageTable({ steps, record }: { steps: readonly StepRecord[]; record: RunRecord }) {
  return (
    <table class="usage">
      <tr>
        <th>#</th>
        <th>step</th>
        <th>node</th>
        <th>attempts</th>
        <th>execution</th>
        <th>input tokens</th>
        <th>output tokens</th>
        <th>cost</th>
        <th>model</th>
      </tr>
      {steps.map((step) => {
        const usage = step.usage;
        return (
          <tr>
            <td>{step.index}</td>
            <td>{`s${step.superstep}.t${step.task}`}</td>
            <td>{step.node}</td>
            <td>{step.attempts}</td>
            <td>{formatDuration(Date.parse(step.endedAt) - Date.parse(step.startedAt))}</td>
            <td>{usage ? usage.inputTokens : ''}</td>
            <td>{usage ? usage.outputTokens : ''}</td>
            <td>{usage ? formatCost(usage.costUsd) : ''}</td>
            <td>{usage?.model ?? ''}</td>
          </tr>
        );
      })}
      <tr>
        <th colSpan={5}>total (the whole run)</th>
        <th>{record.usage.inputTokens}</th>
        <th>{record.usage.outputTokens}</th>
        <th>{formatCost(record.usage.costUsd)}</th>
        <th></th>
      </tr>
    </table>
  );
}

/** The events of each superstep, grouped once (a step's details list its own; step-start is left out). */
function eventsBySuperstep(events: readonly RunEvent[]): Map<number, RunEvent[]> {
  const bySuperstep = new Map<number, RunEvent[]>();
  for (const event of events) {
    const superstep = (event.data as { superstep?: number }).superstep;
    if (typeof superstep !== 'number' || event.type === 'step-start') continue;
    let own = bySuperstep.get(superstep);
    if (!own) bySuperstep.set(superstep, (own = []));
    own.push(event);
  }
  return bySuperstep;
}

/** Each shown step's record and its events (those the page read: the latest of a long run). */
export function StepDetails({ steps, events }: { steps: readonly StepRecord[]; events: readonly RunEvent[] }) {
  if (steps.length === 0) return <p class="muted">No committed step yet.</p>;
  const bySuperstep = eventsBySuperstep(events);
  return (
    <>
      {steps.map((step) => {
        const own = (bySuperstep.get(step.superstep) ?? []).filter((event) => {
          const task = (event.data as { task?: number }).task;
          return task === undefined || task === step.task;
        });
        return (
          <details class="step-detail" data-index={String(step.index)}>
            <summary>
              {`#${step.index} s${step.superstep}.t${step.task} ${step.node} — ${step.attempts} attempt${step.attempts === 1 ? '' : 's'}`}
              {step.inheritedFrom ? (
                <span class="muted inherited">
                  {' '}
                  inherited from <a href={`/runs/${encodeURIComponent(step.inheritedFrom)}`}>{step.inheritedFrom}</a>
                </span>
              ) : null}
            </summary>
            <Json
              value={{ step, events: own.map(({ type, data }) => ({ type, data })) }}
              max={READ_BOUNDS.pageTextChars}
            />
          </details>
        );
      })}
    </>
  );
}
