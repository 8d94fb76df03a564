import type { RedisConnection } from '../redis/connect-redis.js';
import type { RunEvent, RunEventType } from '../contracts/run-record.js';
import { runScript } from '../redis/create-redis.js';
import { parseEvent } from './run-meta.js';
import { ADD_RUN_EVENT } from './run-scripts.js';
import type { RunStoreContext } from './run-store-context.js';

/** A run's event stream: appending events and reading them (blocking, for live followers). */
export class RunEvents {
  constructor(private readonly context: RunStoreContext) {}

  /**
   * Adds an event while the run exists (false, nothing written, once it is gone: a late writer must not make
   * an expired run's stream again without its expiry).
   */
  async addEvent(runId: string, type: RunEventType, data: Record<string, unknown>): Promise<boolean> {
    const keys = this.context.keys.run(runId);
    const id = await runScript<string | null>(
      this.context.redis,
      ADD_RUN_EVENT,
      [keys.meta, keys.events],
      [this.context.eventsMaxLen, type, JSON.stringify(data)],
    );
    return id !== null;
  }

  /**
   * Events after `after` (a stream id; '0-0' for all). With `blockMs`, waits that long for new ones —
   * pass a connection of its own for that (a blocked connection serves nobody else).
   */
  async events(
    runId: string,
    { after = '0-0', blockMs, count = 500, connection }: EventReadOptions = {},
  ): Promise<RunEvent[]> {
    const key = this.context.keys.run(runId).events;
    const redis = connection ?? this.context.redis;
    const reply =
      blockMs === undefined
        ? await redis.xread('COUNT', count, 'STREAMS', key, after)
        : await redis.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', key, after);
    if (!reply) return [];
    return reply[0]![1].map(([id, fields]) => parseEvent(id, fields));
  }

  /** The run's latest `count` events, oldest first (XREVRANGE with COUNT): what a page shows of a long stream. */
  async latest(runId: string, count: number): Promise<RunEvent[]> {
    const reply = await this.context.redis.xrevrange(this.context.keys.run(runId).events, '+', '-', 'COUNT', count);
    return reply.map(([id, fields]) => parseEvent(id, fields)).reverse();
  }
}

export interface EventReadOptions {
  after?: string;
  blockMs?: number;
  count?: number;
  connection?: RedisConnection;
}
