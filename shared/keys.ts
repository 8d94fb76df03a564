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

  /** One family of `/metrics` counters (a hash), shared by workers and API processes. */
  metrics(family: string): string {
    return `${this.prefix}:metrics:${family}`;
  }

  /** A tenant's runs not yet finished (the API's per-tenant cap), scored by creation time. */
  tenantInflight(tenant: string): string {
    return `${this.prefix}:t:${tenant}:inflight`;
  }

  /** Requests of one API key (by its hash id) in one rate-limit window. */
  apiRateLimit(keyId: string, window: number): string {
    return `${this.prefix}:api:rate:${keyId}:${window}`;
  }

  /** A dashboard sign-in session, by the sha256 of its cookie token (the token itself is never stored). */
  dashboardSession(tokenHash: string): string {
    return `${this.prefix}:api:session:${tokenHash}`;
  }

  /** Sliding-window log of one provider+model's requests (member `<ms>:<id>:<tokens>`), shared by all workers. */
  providerLimit(provider: string, model: string): string {
    return `${this.prefix}:limits:{${provider}:${model}}`;
  }

  /** One batch's keys, under one hash tag: meta (hash), items (list of JSON), inflight (set of run ids). */
  batch(batchId: string): { meta: string; items: string; inflight: string; lock: string } {
    const base = `${this.prefix}:{batch:${batchId}}`;
    return { meta: `${base}:meta`, items: `${base}:items`, inflight: `${base}:inflight`, lock: `${base}:lock` };
  }

  /** A tenant's batches, scored by creation time. */
  tenantBatches(tenant: string): string {
    return `${this.prefix}:t:${tenant}:batches`;
  }

  /** Batches still dispatching; the reconciler tops these up. */
  activeBatches(): string {
    return `${this.prefix}:batches:active`;
  }
}
