import type { RunEvent } from '../../../shared/contracts/run-record.js';
import { eventTime } from './step-timeline.js';

/** Events that say where a step stands; the last one decides whether a step is parked now. */
const STEP_EVENTS = new Set(['step-start', 'step-end', 'step-retry', 'step-parked', 'run-waiting', 'run-end']);

interface ParkedData {
  node?: string;
  superstep?: number;
  task?: number;
  parkedMs?: number;
  waitingOn?: {
    providerBatch?: { batch?: string; flush?: string | null; request?: string };
    sleep?: { until?: string };
    event?: { name?: string; key?: string | null; until?: string | null };
    callback?: { until?: string };
  };
}

/**
 * A step parked without a worker (issue 38), as the run inspector says it: which step, on what it waits
 * (its provider batch: a link to the batch's page, which lists them), since when, and the latest it
 * looks again by itself. Nothing when the run's last step event is not a park.
 */
export function ParkedStepNotice({ events }: { events: readonly RunEvent[] }) {
  const last = events.findLast((event) => STEP_EVENTS.has(event.type));
  if (last?.type !== 'step-parked') return null;
  const data = last.data as ParkedData;
  const since = new Date(eventTime(last)).toISOString();
  const step = `s${data.superstep ?? '?'}.t${data.task ?? 0} (${data.node ?? '?'})`;
  const wakeBy = new Date(eventTime(last) + (data.parkedMs ?? 0)).toISOString();
  const batch = data.waitingOn?.providerBatch;
  const { sleep, event, callback } = data.waitingOn ?? {};
  if (callback)
    return (
      <div class="card" id="parked" role="status">
        <b>Step {step} waits for a callback</b> until {callback.until ?? '?'} (then it times out), holding no worker,
        since {since}.
      </div>
    );
  if (sleep || event) return <WaitNotice step={step} since={since} sleep={sleep} event={event} />;
  return (
    <div class="card" id="parked" role="status">
      <b>Step {step} is waiting on its provider batch</b>
      {batch?.batch ? (
        <>
          {' '}
          of batch <a href={`/batches/${encodeURIComponent(batch.batch)}`}>{batch.batch}</a>
          {batch.flush ? (
            <>
              {' '}
              (<code>{batch.flush}</code>)
            </>
          ) : null}
        </>
      ) : null}
      , holding no worker, since {since}. It wakes as soon as its answer is saved (at the latest {wakeBy}, to look
      again).
      {batch?.request ? (
        <>
          {' '}
          Request <code>{batch.request}</code>.
        </>
      ) : null}
    </div>
  );
}

/** A step parked by `context.sleep` or `context.waitFor`: what it waits for and until when. */
function WaitNotice({
  step,
  since,
  sleep,
  event,
}: {
  step: string;
  since: string;
  sleep: { until?: string } | undefined;
  event: { name?: string; key?: string | null; until?: string | null } | undefined;
}) {
  return (
    <div class="card" id="parked" role="status">
      {sleep ? (
        <>
          <b>Step {step} is sleeping</b> until {sleep.until ?? '?'}
        </>
      ) : (
        <>
          <b>Step {step} is waiting for the event</b> <code>{event?.name ?? '?'}</code>
          {event?.key ? (
            <>
              {' '}
              (to the run or to key <code>{event.key}</code>)
            </>
          ) : null}
          {event?.until ? <> until {event.until}, then it times out</> : <>, with no timeout</>}
        </>
      )}
      , holding no worker, since {since}.
    </div>
  );
}
