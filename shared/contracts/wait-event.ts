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

/** What `context.callback` takes. */
export interface CallbackOptions {
  /** The URL works this long after the first call, then `wait()` resolves with `{ timedOut: true }`. @default 86400000 (1 day) */
  timeoutMs?: number;
}

/** What a callback's `wait()` resolves to: the JSON body POSTed to its URL, or its timeout. */
export type CallbackOutcome<T = unknown> = { body: T } | { timedOut: true };

/** A callback URL handed out by `context.callback`: the same on every run of the step. */
export interface NodeCallback<T = unknown> {
  /** `POST <AGENTQ_PUBLIC_URL>/v1/callbacks/<token>` with a JSON body completes the wait; no API key. */
  url: string;
  token: string;
  /** ISO 8601: the URL answers 410 CALLBACK_EXPIRED from then on. */
  expiresAt: string;
  /** Parks the step until the URL is called (or it expires); the node runs again then and this resolves. */
  wait(): Promise<CallbackOutcome<T>>;
}

/** What `context.interrupt` takes besides its request. */
export interface InterruptOptions {
  /**
   * Hand out a callback URL with the interrupt (`callbackUrl` in the run's record and its `run-waiting`
   * event): a `POST` of the resume body to it answers the interrupt as `POST /v1/runs/:id/resume` does.
   * `true`: it works for a day; `{ timeoutMs }`: this long after the first time the step asks.
   * @default no URL
   */
  callback?: true | { timeoutMs?: number };
}
