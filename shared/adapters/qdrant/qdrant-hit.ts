import type { Schemas } from '@qdrant/js-client-rest';
import type { Payload, VectorHit } from '../../ports/vector-store.js';

type ScoredPoint = Schemas['ScoredPoint'];

/** The dimensions a registry entry's payload records (null: none yet). */
export function dimensionsOf(payload: Schemas['Payload'] | null | undefined): number | null {
  const dimensions = payload?.dimensions;
  return typeof dimensions === 'number' ? dimensions : null;
}

/** A port hit from a Qdrant point (the original record id and collection are in its payload). */
export function toHit(point: ScoredPoint, score = point.score): VectorHit {
  const payload = point.payload ?? {};
  return {
    id: String(payload.record_id),
    collection: String(payload.collection),
    score,
    text: typeof payload.text === 'string' ? payload.text : '',
    payload: (payload.payload ?? {}) as Payload,
  };
}
