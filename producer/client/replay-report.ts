import { AgentqError, type ErrorRecord } from '../../shared/contracts/errors.js';
import { isTerminal, type RunStatus, type StepRecord } from '../../shared/contracts/run-record.js';
import { diffRequests, type RequestDifference } from '../../shared/store/recordings/diff-requests.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';

/**
 * A replay's verdict, one JSON object for CI (`agentq replay --json`): `diverged` and, when
 * true, where first (`step` as the original's step log numbers it, `node`) and how (`diff`).
 */
export interface ReplayReport {
  /** The replay run. */
  runId: string;
  /** The run it replays. */
  replayOf: string;
  status: RunStatus;
  /** `same`: same path, same calls, same output; `failed`: it ended on another error; `pending`: not finished. */
  outcome: 'same' | 'diverged' | 'failed' | 'pending';
  diverged: boolean;
  step?: number;
  node?: string;
  /** `request`, `node`, `call` (at a paid call), `path` (another node or step count), `output` (another output). */
  reason?: string;
  /** What differs: recorded value against replayed value, by JSON path. */
  diff?: RequestDifference[];
  /** True when it went on with live calls after diverging (`--continue-live`). */
  continuedLive?: boolean;
  /** The replay's error, when it failed (REPLAY_DIVERGED included). */
  error?: ErrorRecord;
}

interface DivergenceDetails {
  step: number;
  node: string;
  reason: string;
  diff: RequestDifference[];
}

function isDivergence(value: unknown): value is DivergenceDetails {
  return typeof value === 'object' && value !== null && 'step' in value && 'diff' in value;
}

/** The first step where two step logs ran another node (or one ended sooner), or -1 when they agree. */
function firstOtherStep(original: StepRecord[], replayed: StepRecord[]): number {
  const key = (step: StepRecord | undefined) => step && `${step.superstep}.${step.task}.${step.node}`;
  const byPosition = (steps: StepRecord[]) => [...steps].sort((a, b) => a.superstep - b.superstep || a.task - b.task);
  const [a, b] = [byPosition(original), byPosition(replayed)];
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) if (key(a[i]) !== key(b[i])) return i;
  return -1;
}

/** The report of replay run `runId`: from its error or noted divergence, else by comparing it with its original. */
export async function replayReport(store: RedisRunStore, runId: string): Promise<ReplayReport> {
  const meta = await store.reads.get(runId);
  if (!meta) throw new AgentqError('NOT_FOUND', `run ${runId} not found (it may have expired or been purged)`);
  if (!meta.replay)
    throw new AgentqError('INVALID_INPUT', `run ${runId} is not a replay; start one with agentq replay <runId>`);
  const base = { runId, replayOf: meta.replay.runId, status: meta.status };
  const divergence = meta.error?.code === 'REPLAY_DIVERGED' ? meta.error.details : meta.divergence;
  if (isDivergence(divergence))
    return {
      ...base,
      outcome: 'diverged',
      diverged: true,
      step: divergence.step,
      node: divergence.node,
      reason: divergence.reason,
      diff: divergence.diff,
      ...(meta.divergence ? { continuedLive: true } : {}),
      ...(meta.error ? { error: meta.error } : {}),
    };
  if (!isTerminal(meta.status)) return { ...base, outcome: 'pending', diverged: false };
  if (meta.status !== 'completed')
    return { ...base, outcome: 'failed', diverged: false, ...(meta.error ? { error: meta.error } : {}) };
  const [original, originalSteps, steps] = await Promise.all([
    store.reads.get(meta.replay.runId),
    store.reads.steps(meta.replay.runId),
    store.reads.steps(runId),
  ]);
  if (!original)
    throw new AgentqError(
      'NOT_FOUND',
      `run ${meta.replay.runId}, which run ${runId} replays, is gone (expired or purged): its path and output cannot be compared`,
    );
  const other = firstOtherStep(originalSteps, steps);
  if (other >= 0) {
    const recorded = originalSteps[other];
    const replayed = steps[other];
    return {
      ...base,
      outcome: 'diverged',
      diverged: true,
      step: (recorded ?? replayed)?.index ?? other,
      node: replayed?.node ?? recorded?.node ?? '',
      reason: 'path',
      diff: [
        {
          path: `steps[${other}]`,
          ...(recorded ? { recorded: `s${recorded.superstep}.t${recorded.task} ${recorded.node}` } : {}),
          ...(replayed ? { replayed: `s${replayed.superstep}.t${replayed.task} ${replayed.node}` } : {}),
        },
      ],
    };
  }
  const outputDiff = diffRequests(original.output, meta.output);
  if (outputDiff.length > 0) {
    const last = steps.at(-1);
    return {
      ...base,
      outcome: 'diverged',
      diverged: true,
      step: last?.index ?? 0,
      node: last?.node ?? '',
      reason: 'output',
      diff: outputDiff.map((entry) => ({
        ...entry,
        path: `output${entry.path === '(request)' ? '' : `.${entry.path}`}`,
      })),
    };
  }
  return { ...base, outcome: 'same', diverged: false };
}
