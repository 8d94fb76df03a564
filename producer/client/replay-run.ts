import { AgentqError } from '../../shared/contracts/errors.js';
import { isTerminal, type RunRecord } from '../../shared/contracts/run-record.js';
import type { ServedGraphs } from '../../shared/store/served-graphs.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { RunEnqueuer } from '../../shared/operations/runs/run-enqueuer.js';

export interface ReplayOptions {
  /** Replay against this graph version. @default the original's */
  graphVersion?: string;
  /** After the first divergence, go on with live (paid) calls instead of stopping there. @default false */
  continueLive?: boolean;
  /** Queue it even when live workers exist and none serves that version. @default false */
  queueUnserved?: boolean;
}

interface ReplayDeps {
  store: RedisRunStore;
  enqueuer: RunEnqueuer;
  served: ServedGraphs;
}

/**
 * Replays a finished run: a new run of the same input through the graph (the original's
 * version, or `graphVersion`) whose model and tool calls are answered by the original's recording, in
 * order, with no paid call. It stops with REPLAY_DIVERGED at the first call that asks something else
 * (`continueLive`: notes it and goes on live). Refused with RECORDING_UNAVAILABLE, naming what is
 * missing, when the original did not record its calls, its recording expired, or it stopped at its budget.
 */
export async function replayRun(deps: ReplayDeps, runId: string, options: ReplayOptions = {}): Promise<RunRecord> {
  const { store, enqueuer, served } = deps;
  const meta = await store.reads.get(runId);
  if (!meta)
    throw new AgentqError(
      'NOT_FOUND',
      `run ${runId} not found (it may never have existed, or it expired or was purged)`,
    );
  if (!isTerminal(meta.status))
    throw new AgentqError('CONFLICT', `run ${runId} is ${meta.status}; only a finished run can be replayed`);
  // A fork's steps before its fork point ran in its original (and its state may be patched): its own
  // recording cannot answer a replay from the input.
  if (meta.forkOf)
    throw new AgentqError(
      'RECORDING_UNAVAILABLE',
      `cannot replay run ${runId}: it is a fork of run ${meta.forkOf.runId} from step ${meta.forkOf.step}, whose earlier calls were made (and recorded) by that run; replay run ${meta.forkOf.runId} instead`,
      { details: { runId, forkOf: meta.forkOf } },
    );
  const recording = await store.recordings.summary(runId);
  const missing = !recording.present
    ? 'it has no recording (it was created with AGENTQ_RECORDING=off, before recording existed, or its recording expired)'
    : recording.mode !== 'full'
      ? `it recorded only its steps, not its calls (AGENTQ_RECORDING was '${recording.mode ?? 'off'}' when it was created)`
      : recording.over
        ? `its recording stopped at '${recording.over}' when it reached AGENTQ_RECORDING_MAX_BYTES, so the calls after that point were not kept`
        : undefined;
  if (missing)
    throw new AgentqError('RECORDING_UNAVAILABLE', `cannot replay run ${runId}: ${missing}`, {
      details: { runId, mode: recording.mode, over: recording.over },
    });
  const graphVersion = options.graphVersion ?? meta.graphVersion ?? undefined;
  if (!options.queueUnserved) await served.requireServed(meta.graph, graphVersion);
  const { record } = await enqueuer.enqueueValid(
    {
      graph: meta.graph,
      ...(graphVersion === undefined ? {} : { graphVersion }),
      input: meta.input,
      tenant: meta.tenant,
      options: { maxSteps: meta.maxSteps, ...(meta.tokenBudget ? { tokenBudget: meta.tokenBudget } : {}) },
    },
    { replay: { runId, live: options.continueLive === true } },
  );
  return record;
}
