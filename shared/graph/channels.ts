/**
 * A state key and how updates to it combine (the seeds' key strategies; LangGraph's channels).
 * Reducers must be pure: parallel branches' writes are merged through them, in task order, by
 * whichever worker finishes the superstep last.
 */
export interface Channel<Value, UpdateValue = Value> {
  readonly kind: 'replace' | 'append' | 'custom';
  readonly reducer: (current: Value, update: UpdateValue) => Value;
  readonly initial: () => Value;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- channel value types vary per key
export type Channels = Record<string, Channel<any, any>>;

export type StateOf<C extends Channels> = { [K in keyof C]: C[K] extends Channel<infer V, infer _U> ? V : never };
export type UpdateOf<C extends Channels> = {
  [K in keyof C]?: C[K] extends Channel<infer _V, infer U> ? U : never;
};

function initialOf<T>(initial: T | (() => T)): () => T {
  // Copy through JSON so two runs never share one mutable default.
  return typeof initial === 'function' ? (initial as () => T) : () => structuredClone(initial);
}

export const channel = {
  /** The last write wins. */
  replace<T>(initial: T | (() => T)): Channel<T, T> {
    return { kind: 'replace', reducer: (_current, update) => update, initial: initialOf(initial) };
  },
  /** Writes are appended (a single value or an array of values). */
  append<T>(): Channel<T[], T | T[]> {
    return {
      kind: 'append',
      reducer: (current, update) => current.concat(Array.isArray(update) ? update : [update]),
      initial: () => [],
    };
  },
  /** Your own combination, e.g. a sum or a keyed merge. */
  custom<T, U = T>(reducer: (current: T, update: U) => T, initial: T | (() => T)): Channel<T, U> {
    return { kind: 'custom', reducer, initial: initialOf(initial) };
  },
};

/** Applies updates to a state through the channels' reducers; returns the new state and the keys changed. */
export function applyUpdates<C extends Channels>(
  channels: C,
  state: StateOf<C>,
  updates: readonly UpdateOf<C>[],
): { state: StateOf<C>; changed: (keyof C & string)[] } {
  const next = { ...state };
  const changed = new Set<keyof C & string>();
  for (const update of updates) {
    for (const [key, value] of Object.entries(update)) {
      const definition = channels[key];
      if (!definition || value === undefined) continue;
      (next as Record<string, unknown>)[key] = definition.reducer(next[key as keyof C], value);
      changed.add(key as keyof C & string);
    }
  }
  return { state: next, changed: [...changed] };
}

/** A state from stored values; keys never written take their channel's initial value. */
export function stateFrom<C extends Channels>(channels: C, stored: Record<string, unknown>): StateOf<C> {
  const state: Record<string, unknown> = {};
  for (const [key, definition] of Object.entries(channels))
    state[key] = key in stored ? stored[key] : definition.initial();
  return state as StateOf<C>;
}
