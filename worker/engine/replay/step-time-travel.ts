import type { MemoOptions } from '../../../shared/graph/node-context.js';
import type { NodeContextInput } from '../create-node-context.js';
import { replayedCall, type ReplayAnswer } from './replayed-call.js';
import {
  recordCallArgs,
  type CallToRecord,
  type RecordVerdict,
} from '../../../shared/store/recordings/run-recordings.js';

/**
 * Time travel's part in one attempt of a step's paid calls, for NodeContext.memo: a replay
 * run's calls are answered from its original's recording; a run that records `full` keeps each call's
 * request fingerprint and result beside the memo (never in place of it: the memo alone keeps paid work from
 * happening twice).
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
    const { store, data, logger } = this.input;
    const call = this.toRecord(key, options, value);
    if (!call) return value;
    try {
      this.recordedAs(key, await store.recordings.recordCall(data.runId, call));
    } catch (error) {
      logger.warn({ key, err: String(error) }, 'recording of a paid call failed; a replay of it will say so');
    }
    return value;
  }

  /**
   * The call's recording as arguments of the script that saves its result (record_call), when the run
   * records `full` and this attempt has not recorded it yet: then it counts as recorded (`recordedAs`
   * takes the verdict), and `record` leaves it be.
   */
  recordArgs(key: string, options: MemoOptions | undefined, value: unknown): (string | number)[] | undefined {
    const call = this.toRecord(key, options, value);
    return call && recordCallArgs(call);
  }

  /** What the script that recorded `key` answered. */
  recordedAs(key: string, verdict: RecordVerdict | undefined): void {
    if (verdict === 'over')
      this.input.logger.debug({ key }, 'recording stopped: the run reached AGENTQ_RECORDING_MAX_BYTES');
  }

  private toRecord(key: string, options: MemoOptions | undefined, value: unknown): CallToRecord | undefined {
    const { meta, node } = this.input;
    if (meta.record !== 'full' || this.recorded.has(key)) return undefined;
    this.recorded.add(key);
    return { stepId: this.stepId, key, node, request: options?.request, response: value };
  }
}
