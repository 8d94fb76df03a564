import { runScript } from '../../redis/create-redis.js';
import type { RunStoreContext } from '../run-store-context.js';
import { NOTE_ON_LIVE_META } from '../run-scripts.js';
import { RECORD_CALL } from './record-call-script.js';
import { addressesOf, expandRequest, fingerprintRequest } from './request-fingerprint.js';

/** One paid call of a step as recorded: who asked, what (by fingerprint and compact form), and the answer. */
interface RecordedCall {
  node: string;
  fingerprint: string;
  /** The request, its messages and tool list by content address (`expand` reads them). */
  request: Record<string, unknown>;
  /** The call's result as the step's memo held it (the model response, the tool outcome). */
  response: unknown;
}

/** What a run's recording holds, in a few words. */
interface RecordingSummary {
  /** AGENTQ_RECORDING when the run was created; null: it records nothing. */
  mode: 'full' | 'steps' | null;
  /** JSON bytes kept (the budget once it was spent). */
  bytes: number;
  /** The first thing the byte budget refused (the recording stops there), or null. */
  over: string | null;
  /** True when the run's keys hold a recording at all (false: none made, or expired with the run). */
  present: boolean;
}

interface StoredCall {
  n: string;
  f: string;
  q: Record<string, unknown>;
  r: unknown;
}

/** A paid call as a step records it. */
export interface CallToRecord {
  stepId: string;
  key: string;
  node: string;
  request: unknown;
  response: unknown;
}

/** The recording verdict of a call (record_call in record-call-script.ts). */
export type RecordVerdict = 'ok' | 'exists' | 'off' | 'over';

/** A call as record_call's arguments: its field, its JSON, then its contents not stored inline. */
export function recordCallArgs(call: CallToRecord): (string | number)[] {
  const { fingerprint, compact, contents } = fingerprintRequest(call.request);
  const stored: StoredCall = { n: call.node, f: fingerprint, q: compact, r: call.response ?? null };
  return [callField(call.stepId, call.key), JSON.stringify(stored), contents.size, ...[...contents].flat()];
}

/** The field of a call: `k:<stepId>:<memo key>`. */
function callField(stepId: string, key: string): string {
  return `k:${stepId}:${key}`;
}

/**
 * The run store's recordings: paid calls recorded beside the memo (never in place of it) for
 * replay, read back for replay and fork. Superstep boundaries and parallel writes are recorded by the
 * commit scripts themselves (run-scripts.ts); this writes and reads the calls.
 */
export class RunRecordings {
  constructor(private readonly context: RunStoreContext) {}

  /** Records a call of a step of a run that records `full` (the script checks): → the script's verdict. */
  async recordCall(runId: string, call: CallToRecord): Promise<RecordVerdict> {
    return this.context.script(RECORD_CALL, runId, recordCallArgs(call));
  }

  /** A recorded call, or null when the run recorded none under that step and key. */
  async call(runId: string, stepId: string, key: string): Promise<RecordedCall | null> {
    const json = await this.context.redis.hget(this.context.keys.run(runId).record, callField(stepId, key));
    if (json === null) return null;
    const stored = JSON.parse(json) as StoredCall;
    return { node: stored.n, fingerprint: stored.f, request: stored.q, response: stored.r };
  }

  /** A recorded request with its messages and tool list read back (what a divergence's diff compares). */
  async expand(runId: string, compact: Record<string, unknown>): Promise<Record<string, unknown>> {
    const refs = addressesOf(compact);
    if (refs.length === 0) return compact;
    const values = await this.context.redis.hmget(this.context.keys.run(runId).record, ...refs);
    const contents = new Map<string, string>();
    refs.forEach((ref, index) => {
      const value = values[index];
      if (typeof value === 'string') contents.set(ref, value);
    });
    return expandRequest(compact, contents);
  }

  async summary(runId: string): Promise<RecordingSummary> {
    const keys = this.context.keys.run(runId);
    const [meta, stats] = await Promise.all([
      this.context.redis.hget(keys.meta, 'record'),
      this.context.redis.hmget(keys.record, 'bytes', 'over'),
    ]);
    return {
      mode: meta === 'full' || meta === 'steps' ? meta : null,
      bytes: Number(stats[0] ?? 0),
      over: stats[1] ?? null,
      present: stats[0] !== null,
    };
  }

  /** True once a live replay noted its divergence. */
  async diverged(runId: string): Promise<boolean> {
    return (await this.context.redis.hexists(this.context.keys.run(runId).meta, 'divergence')) === 1;
  }

  /** A replay that goes on live keeps its first divergence on its meta (`divergence`); later ones are not kept. */
  async noteDivergence(runId: string, divergence: unknown): Promise<void> {
    const meta = this.context.keys.run(runId).meta;
    // Only while the run exists: a late replay step must not make an expired run's meta again.
    await runScript(this.context.redis, NOTE_ON_LIVE_META, [meta], ['divergence', JSON.stringify(divergence), '']);
  }
}
