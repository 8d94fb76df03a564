/**
 * Every Redis key of the run store is built here (DESIGN §3). One run's keys share the hash tag
 * `{run:<id>}` so they live in one Redis Cluster slot and a Lua script over them stays atomic.
 * BullMQ's keys are BullMQ's business (its own prefix); nothing here touches them.
 */
export const DEFAULT_KEY_PREFIX = 'agentq';

export interface RunKeys {
  meta: string;
  state: string;
  messages: string;
  steps: string;
  events: string;
  /** Writes of the tasks of the current superstep, by task index (parallel branches). */
  writes: string;
  /** Memoised paid work (model responses), by step. */
  memo: string;
}

export class Keys {
  constructor(readonly prefix: string = DEFAULT_KEY_PREFIX) {}

  run(runId: string): RunKeys {
    const base = `${this.prefix}:{run:${runId}}`;
    return {
      meta: `${base}:meta`,
      state: `${base}:state`,
      messages: `${base}:messages`,
      steps: `${base}:steps`,
      events: `${base}:events`,
      writes: `${base}:writes`,
      memo: `${base}:memo`,
    };
  }

  /** All keys of a run, in a fixed order (scripts that expire or delete a run take them all). */
  runAll(runId: string): string[] {
    const keys = this.run(runId);
    return [keys.meta, keys.state, keys.messages, keys.steps, keys.events, keys.writes, keys.memo];
  }

  /** A tenant's runs, scored by creation time (ms). */
  tenantRuns(tenant: string): string {
    return `${this.prefix}:t:${tenant}:runs`;
  }

  /** Runs not yet finished, scored by creation time; the reconciler sweeps these. */
  activeRuns(): string {
    return `${this.prefix}:runs:active`;
  }

  /** Pub/sub channel on which cancellations reach the workers running the step. */
  cancelChannel(): string {
    return `${this.prefix}:cancel`;
  }

  /** Mutual exclusion for the reconciler's sweep across workers. */
  reconcilerLock(): string {
    return `${this.prefix}:reconciler:lock`;
  }
}
