import type { MemoOptions } from '../../../shared/graph/node-context.js';
import type { NodeContextInput } from '../create-node-context.js';
import { replayedCall, type ReplayAnswer } from './replayed-call.js';

/**
 * Time travel's part in one attempt of a step's paid calls (issue 39), for NodeContext.memo: a replay
 * run's calls are answered from its original's recording; a run that records `full` keeps each call's
 * request fingerprint and result beside the memo (never in place of it: the memo stays I4's).
 */
export class StepTimeTravel {
  /** Calls recorded by this attempt (a node may read one memo key twice). */
  private readonly recorded = new Set<string>();

  constructor(
    private readonly input: Pick<NodeContextInput, 'store' | 'meta' | 'data' | 'node' | 'logger'>,
    private readonly stepId: string,
  ) {}

  /** The recorded answer to this call of a replay, or 'live' after a divergence with --continue-live. */
  replay(key: string, options: MemoOptions | undefined): Promise<ReplayAnswer> {
    const { store, meta, data, node, logger } = this.input;
    return replayedCall({
      store,
      replay: meta.replay!,
      runId: data.runId,
      stepId: this.stepId,
      superstep: data.superstep,
      task: data.task,
      node,
      key,
      request: options?.request,
      stepCount: meta.stepCount,
      logger,
    });
  }

  /**
   * Records the call (when the run records `full`) and hands its result back. A failed write costs the
   * recording, never the step: the replay of that call later says the recording is missing.
   */
  async record<T>(key: string, options: MemoOptions | undefined, value: T): Promise<T> {
    const { store, meta, data, node, logger } = this.input;
    if (meta.record !== 'full' || this.recorded.has(key)) return value;
    this.recorded.add(key);
    try {
      const verdict = await store.recordings.recordCall(data.runId, {
        stepId: this.stepId,
        key,
        node,
        request: options?.request,
        response: value,
      });
      if (verdict === 'over') logger.debug({ key }, 'recording stopped: the run reached AGENTQ_RECORDING_MAX_BYTES');
    } catch (error) {
      logger.warn({ key, err: String(error) }, 'recording of a paid call failed; a replay of it will say so');
    }
    return value;
  }
}
