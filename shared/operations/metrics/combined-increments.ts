import type { RedisConnection } from '../../redis/connect-redis.js';
import { sharedRoundTrip } from '../../redis/shared-round-trip.js';

/**
 * Increments of one counter hash that many callers make at once, written together (sharedRoundTrip):
 * those made while a write is in flight are summed into the next one. Each caller's promise settles with
 * the write that holds its increment (a failed write fails the callers it held, whose increments are
 * lost, as a failed write of their own would lose them). A worker with a hundred paid calls in flight
 * thus writes its counters a few times a round trip, not once per call.
 */
export class CombinedIncrements {
  /** Integer and float increments not yet sent, by field. */
  private integers = new Map<string, number>();
  private floats = new Map<string, number>();
  private readonly write = sharedRoundTrip(() => this.send());

  constructor(
    private readonly redis: RedisConnection,
    private readonly key: string,
  ) {}

  /** Adds `integers` (HINCRBY) and `floats` (HINCRBYFLOAT) by field; resolves once they are written. */
  add(integers: Record<string, number>, floats: Record<string, number> = {}): Promise<void> {
    for (const [name, by] of Object.entries(integers)) this.integers.set(name, (this.integers.get(name) ?? 0) + by);
    for (const [name, by] of Object.entries(floats)) this.floats.set(name, (this.floats.get(name) ?? 0) + by);
    return this.write();
  }

  private async send(): Promise<void> {
    const [integers, floats] = [this.integers, this.floats];
    this.integers = new Map();
    this.floats = new Map();
    // One key: a plain pipeline, on one Redis and on a Cluster alike.
    const pipeline = this.redis.pipeline();
    for (const [name, by] of integers) pipeline.hincrby(this.key, name, by);
    for (const [name, by] of floats) pipeline.hincrbyfloat(this.key, name, by);
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
  }
}
