/** An event as a step waiting with `context.waitFor` receives it (POST /v1/events, `client.sendEvent`). */
export interface WaitEvent<T = unknown> {
  id: string;
  name: string;
  data: T;
  /** ISO 8601. */
  sentAt: string;
  /** The correlation key it was sent to; absent when it was sent to the run. @default absent */
  key?: string;
}

/** What `context.waitFor` resolves to: the event, or its timeout. */
export type WaitOutcome<T = unknown> = { event: WaitEvent<T> } | { timedOut: true };

/** What `context.waitFor` waits for besides the event's name. */
export interface WaitForOptions {
  /** Fields the event's `data` must have, with these values (top-level; nested values compared as JSON). @default any */
  match?: Record<string, unknown>;
  /** Resolve with `{ timedOut: true }` this long after the first call. @default no timeout (the run's deadline still ends it) */
  timeoutMs?: number;
  /** Also take events sent to this correlation key of the tenant (besides those sent to the run). @default none */
  key?: string;
}
