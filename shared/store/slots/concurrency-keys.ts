import { createHash } from 'node:crypto';
import type { Concurrency } from '../../contracts/job-schema.js';
import { ID_PATTERN } from '../../contracts/ids.js';
import type { RedisConnection } from '../../redis/connect-redis.js';
import type { Keys } from '../keys.js';
import { KeyedSlots, type SlotTurn } from './keyed-slots.js';

/** Holders a waiting run checks for ends whose hand-on was lost; a key's first ones are enough to unstick it. */
const HOLDERS_CHECKED = 20;

interface ConcurrencyRun {
  tenant: string;
  runId: string;
  createdAt: number;
  concurrency: Concurrency;
}

/**
 * Concurrency keys: at most `limit` runs of a tenant's key are taken in at once (KeyedSlots, in line by
 * creation time). A run joins its key's line as a worker takes it in and leaves it when it finishes (the
 * run-finished hook), which hands its slot to the first run waiting.
 */
export class ConcurrencyKeys {
  private readonly slots: KeyedSlots;

  constructor(
    redis: RedisConnection,
    private readonly keys: Keys,
    /** How long an idle key outlives its last change, seconds. */
    private readonly ttlSeconds: number,
  ) {
    this.slots = new KeyedSlots(redis);
  }

  /** Joins the run's key (unless in it) → whether it holds a slot; else the first holders ahead of it. */
  async wait({ tenant, runId, createdAt, concurrency }: ConcurrencyRun): Promise<SlotTurn> {
    return this.slots.wait({
      key: this.keyOf(tenant, concurrency.key),
      runId,
      createdAt,
      limit: concurrency.limit,
      ttlSeconds: this.ttlSeconds,
      showAhead: Math.min(concurrency.limit, HOLDERS_CHECKED),
    });
  }

  /** The run leaves its key → the run that holds a slot in its place (to be taken in now), if one waited. */
  async leave(tenant: string, concurrency: Concurrency, runId: string): Promise<string | null> {
    return this.slots.leave(this.keyOf(tenant, concurrency.key), runId, concurrency.limit);
  }

  /** The key's unfinished runs in line (the first `limit` hold its slots). */
  async list(tenant: string, key: string): Promise<string[]> {
    return (await this.slots.list(this.keyOf(tenant, key))).map(({ runId }) => runId);
  }

  private keyOf(tenant: string, key: string): string {
    return this.keys.flowKey(tenant, 'concurrency', key);
  }
}

/**
 * A key a graph derived from a run's input, as a key: one that is not an id (an e-mail address, say, or
 * longer than 128 characters) is stood for by its hash, so any string the graph returns keeps its runs apart.
 */
export function derivedConcurrencyKey(value: string): string {
  return ID_PATTERN.test(value) ? value : `h-${createHash('sha256').update(value).digest('hex').slice(0, 40)}`;
}
