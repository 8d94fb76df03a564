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
  private readonly entries = new Map<string, CacheEntry>();

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

  /**
   * The run's whole history at this superstep as JSON texts (each message as the run store keeps it), when
   * this worker knows it: the run's first step taken in here saw an empty one, and each commit of this
   * worker appended what it knows. Valid exactly as the state is (only a commit appends, and it moves the
   * cursor), so a step that runs from the cache reads no history either.
   */
  historyOf(runId: string, superstep: number): readonly string[] | undefined {
    const entry = this.entries.get(runId);
    return entry?.superstep === superstep ? entry.history : undefined;
  }

  /** `history`: the run's whole history at `superstep` (historyOf), when known. */
  set(runId: string, superstep: number, state: StateText, history?: readonly string[]): void {
    if (this.capacity <= 0) return;
    this.entries.delete(runId);
    this.entries.set(runId, history ? { superstep, state, history } : { superstep, state });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  /**
   * The state BEGIN sent, or (when it sent none: the cursor matched this cache) the cached one; read with
   * `read` if neither (evicted between BEGIN and here: a full cache under load). `history`: the run's
   * whole history at that superstep, when the caller knows it (historyOf).
   */
  async stateOf(
    runId: string,
    superstep: number,
    sent: StateText | null,
    read: () => Promise<unknown>,
    history?: readonly string[],
  ): Promise<StateText> {
    if (sent) {
      this.set(runId, superstep, sent, history);
      return sent;
    }
    const cached = this.get(runId, superstep);
    if (cached) return cached;
    const text = { base: JSON.stringify(await read()), changed: {} };
    this.set(runId, superstep, text, history);
    return text;
  }

  delete(runId: string): void {
    this.entries.delete(runId);
  }

  get size(): number {
    return this.entries.size;
  }
}

interface CacheEntry {
  superstep: number;
  state: StateText;
  history?: readonly string[];
}
