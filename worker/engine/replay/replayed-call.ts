import { AgentqError } from '../../../shared/contracts/errors.js';
import type { RedisRunStore } from '../../../shared/store/redis-run-store.js';
import type { ReplayOf } from '../../../shared/store/run-meta.js';
import { diffRequests, type RequestDifference } from '../../../shared/store/recordings/diff-requests.js';
import { askedOf, fingerprintRequest } from '../../../shared/store/recordings/request-fingerprint.js';
import type { Logger } from '../../../shared/telemetry/logger.js';

/** Where a replay first asked another question than its original: a replay report's `diverged: true` part. */
interface Divergence {
  /** The original's step index at that point (as `agentq steps` numbers it). */
  step: number;
  stepId: string;
  node: string;
  /** The memo key of the call (`model`, `tool-outcome`, …). */
  call: string;
  /** `request` (another request), `node` (another node at this step), `call` (a call the original never made). */
  reason: 'request' | 'node' | 'call';
  /** The original's node at this step, when it was another. */
  recordedNode?: string;
  /** What differs between the recorded request and the replayed one. */
  diff: RequestDifference[];
}

/** What a replay does with one paid call: answer it from the recording, or (after a divergence, live) pay. */
export type ReplayAnswer = { kind: 'recorded'; value: unknown } | { kind: 'live' };

interface ReplayedCallInput {
  store: RedisRunStore;
  replay: ReplayOf;
  runId: string;
  stepId: string;
  superstep: number;
  task: number;
  node: string;
  key: string;
  request: unknown;
  /** The replay's steps committed so far (the step index when the original has no step here). */
  stepCount: number;
  logger: Logger;
}

/**
 * A paid call of a replay run: the original's recorded answer when the step asks what the
 * original asked (same node, same request fingerprint) — no provider request, no tool run. Otherwise the
 * first divergence: the replay fails with REPLAY_DIVERGED naming the step, node and the requests' diff,
 * or (live) keeps it on its meta and pays for this call and every one after it. A recording that is not
 * there (never made, expired, over its byte budget) is RECORDING_UNAVAILABLE, saying which.
 */
export async function replayedCall(input: ReplayedCallInput): Promise<ReplayAnswer> {
  const { store, replay, stepId, node, key } = input;
  // After the first divergence a live replay pays for every call: the path is no longer the original's.
  if (replay.live && (await store.recordings.diverged(input.runId))) return { kind: 'live' };
  const recorded = await store.recordings.call(replay.runId, stepId, key);
  if (recorded && recorded.node === node && recorded.fingerprint === fingerprintRequest(input.request).fingerprint)
    return { kind: 'recorded', value: recorded.response };
  if (!recorded) await requireRecording(store, replay.runId, stepId, key);
  const diff = recorded
    ? diffRequests(await store.recordings.expand(replay.runId, recorded.request), askedOf(input.request))
    : [{ path: '(call)', replayed: askedOf(input.request) }];
  const divergence: Divergence = {
    step: await originalStepIndex(store, replay.runId, input),
    stepId,
    node,
    call: key,
    reason: !recorded ? 'call' : recorded.node !== node ? 'node' : 'request',
    ...(recorded && recorded.node !== node ? { recordedNode: recorded.node } : {}),
    diff,
  };
  const what =
    divergence.reason === 'call'
      ? `the original made no '${key}' call at ${stepId} (the replay took another path)`
      : divergence.reason === 'node'
        ? `the original ran node '${recorded!.node}' at ${stepId}, the replay '${node}'`
        : `its '${key}' request differs from the recorded one (${diff.map((entry) => entry.path).join(', ') || 'same JSON, other fingerprint'})`;
  if (replay.live) {
    await store.recordings.noteDivergence(input.runId, divergence);
    input.logger.info({ divergence }, 'replay diverged; going on with live calls (--continue-live)');
    return { kind: 'live' };
  }
  throw new AgentqError(
    'REPLAY_DIVERGED',
    `replay of run ${replay.runId} diverged at step ${divergence.step} (node '${node}'): ${what}; see error.details.diff, or replay with --continue-live to go on with live calls`,
    { details: divergence },
  );
}

/** Throws RECORDING_UNAVAILABLE unless the original's recording is whole, recording calls (so a missing call is a real divergence). */
async function requireRecording(store: RedisRunStore, originalId: string, stepId: string, key: string): Promise<void> {
  const summary = await store.recordings.summary(originalId);
  const missing = !summary.present
    ? `run ${originalId} has no recording any more (it expired with the run after AGENTQ_RETENTION_SECONDS, or was purged)`
    : summary.mode !== 'full'
      ? `run ${originalId} did not record its calls (AGENTQ_RECORDING was '${summary.mode ?? 'off'}' when it was created)`
      : summary.over
        ? `the recording of run ${originalId} stopped at '${summary.over}' when it reached AGENTQ_RECORDING_MAX_BYTES, before call '${key}' of ${stepId}`
        : undefined;
  if (missing)
    throw new AgentqError('RECORDING_UNAVAILABLE', `cannot replay call '${key}' of ${stepId}: ${missing}`, {
      details: { runId: originalId, stepId, call: key, mode: summary.mode, over: summary.over },
    });
}

/** The original's step index at this superstep and task; the replay's own count when the original has none there. */
async function originalStepIndex(
  store: RedisRunStore,
  originalId: string,
  input: Pick<ReplayedCallInput, 'superstep' | 'task' | 'stepCount'>,
): Promise<number> {
  const steps = await store.reads.steps(originalId);
  return steps.find((step) => step.superstep === input.superstep && step.task === input.task)?.index ?? input.stepCount;
}
