import type { StateText } from '../../shared/store/redis-run-store.js';

/**
 * The latest state of the runs this worker stepped, by run, at the cursor (superstep) it belongs to — a
 * bounded LRU (AGENTQ_STATE_CACHE_SIZE runs). A run's state at a superstep never changes once the cursor
 * reached it (only a commit writes state, and it moves the cursor), so an entry is valid exactly while
 * the run's cursor equals its superstep: BEGIN compares the two in Redis and sends the state only when
 * they differ (another worker committed since, or the entry is gone). Kept as JSON text, so a step sees
 * the same values from the cache as from a read (no Date or undefined that a read would not give back).
 */
export class StateCache {
  private readonly entries = new Map<string, { superstep: number; state: StateText }>();

  constructor(private readonly capacity: number) {}

  /** The superstep whose state is held for the run, for BEGIN to compare with the cursor. */
  superstepOf(runId: string): number | undefined {
    return this.entries.get(runId)?.superstep;
  }

  /** The state at exactly this superstep, if held (and marks it used). */
  get(runId: string, superstep: number): StateText | undefined {
    const entry = this.entries.get(runId);
    if (!entry || entry.superstep !== superstep) return undefined;
    this.entries.delete(runId);
    this.entries.set(runId, entry);
    return entry.state;
  }

  set(runId: string, superstep: number, state: StateText): void {
    if (this.capacity <= 0) return;
    this.entries.delete(runId);
    this.entries.set(runId, { superstep, state });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  delete(runId: string): void {
    this.entries.delete(runId);
  }

  get size(): number {
    return this.entries.size;
  }
}
