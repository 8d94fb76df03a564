import type { Redis } from 'ioredis';

/** The scripted model's latency per call in the batch-floor section: what a model step takes at best. */
const MODEL_MS = 200;

/**
 * Where the questions of a batch-floor run spent their time, from their runs' events (Redis stream ids
 * are Redis's clock in ms): p50 and p90 over the questions, in ms, of
 *  - `dispatch`: a run's end to the creation of the run that took its slot (the k-th run to end frees
 *    the slot of the (k + concurrency)-th run created);
 *  - `start`: a run's creation to its first step's start (admission, its start job taken);
 *  - `model_first` / `model_second`: each model step beyond the model's own 200 ms (the first's end, its
 *    commit, comes after the inline search step its job runs too);
 *  - `search`: the search step, start to end (0 where it runs inline, committed with the first model step);
 *  - `finish`: the last step's end to the run's end;
 *  - `question`: creation to end, beyond the two model calls.
 * Runs are the batch's (`…:run:bat_….i<n>`), each with the rag-agent's three steps.
 */
export async function questionTimeline(redis: Redis, concurrency = 20): Promise<Record<string, number>> {
  const keys: string[] = [];
  for await (const batch of redis.scanStream({ match: '*:run:bat_*.i*:events', count: 1000 }) as AsyncIterable<
    string[]
  >)
    keys.push(...batch);
  const segments = new Map<string, number[]>();
  const add = (name: string, ms: number) => segments.set(name, [...(segments.get(name) ?? []), ms]);
  const created: number[] = [];
  const ended: number[] = [];
  for (const key of keys) {
    const createdAt = Number(await redis.hget(`${key.slice(0, -':events'.length)}:meta`, 'createdAt'));
    const events = (await redis.xrange(key, '-', '+')).map(([id, fields]) => ({
      at: Number(id.split('-')[0]),
      type: fields[fields.indexOf('type') + 1],
    }));
    const at = (type: string) => events.filter((event) => event.type === type).map((event) => event.at);
    const [starts, ends, runStart, runEnd] = [at('step-start'), at('step-end'), at('run-start')[0], at('run-end')[0]];
    if (starts.length !== 3 || ends.length !== 3 || runStart === undefined || runEnd === undefined) continue;
    created.push(createdAt);
    ended.push(runEnd);
    add('start', runStart - createdAt);
    add('model_first', ends[0]! - starts[0]! - MODEL_MS);
    add('search', ends[1]! - starts[1]!);
    add('model_second', ends[2]! - starts[2]! - MODEL_MS);
    add('finish', runEnd - ends[2]!);
    add('question', runEnd - createdAt - 2 * MODEL_MS);
  }
  created.sort((a, b) => a - b);
  ended.sort((a, b) => a - b);
  for (let index = 0; index + concurrency < created.length; index += 1)
    add('dispatch', created[index + concurrency]! - ended[index]!);
  return percentileFigures('timeline', segments);
}

/** `<prefix>_<segment>_p50_ms` and `…_p90_ms` of each segment's values (sorted here). */
export function percentileFigures(prefix: string, segments: Map<string, number[]>): Record<string, number> {
  const figures: Record<string, number> = {};
  for (const [name, values] of segments) {
    values.sort((a, b) => a - b);
    figures[`${prefix}_${name}_p50_ms`] = values[Math.floor(values.length / 2)]!;
    figures[`${prefix}_${name}_p90_ms`] = values[Math.floor(values.length * 0.9)]!;
  }
  return figures;
}
