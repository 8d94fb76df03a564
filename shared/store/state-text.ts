/**
 * A run's state as JSON text: `base`, one JSON object as BEGIN sent it, and `changed`, each field a
 * commit wrote since, as its JSON text. Null in a BEGIN reply: the caller said it holds the state at
 * this cursor (its StateCache). Text, not objects, so a cached state is exactly what a read would give.
 */
export interface StateText {
  base: string;
  changed: Record<string, string>;
}

/** The state a StateText stands for, as fresh objects. */
export function parseStateText(text: StateText): Record<string, unknown> {
  const state = JSON.parse(text.base) as Record<string, unknown>;
  for (const [key, value] of Object.entries(text.changed)) state[key] = JSON.parse(value);
  return state;
}
