import type { Debounce, Throttle } from '../../contracts/job-schema.js';
import type { RedisConnection } from '../../redis/connect-redis.js';
import { runScript } from '../../redis/create-redis.js';
import { luaScript } from '../../redis/lua-script.js';
import type { Keys } from '../keys.js';

const DEBOUNCE = luaScript(new URL('./lua/debounce-1.lua', import.meta.url));
const THROTTLE = luaScript(new URL('./lua/throttle-1.lua', import.meta.url));

/** Without `maxDelayMs`, a trailing debounce that keeps being joined starts at most this long after its first request. */
export const DEFAULT_DEBOUNCE_MAX_DELAY_MS = 30 * 24 * 3600 * 1000;

/** What a debounced request comes to (the header of lua/debounce-1.lua). */
export type DebounceOutcome =
  { kind: 'new' | 'join'; runId: string; delayMs: number } | { kind: 'drop'; runId: string };

/**
 * Debounce and throttle per key of a tenant, on Redis's clock: each decision is one script over one key
 * of its own, so it holds across API processes and workers, and in a Redis Cluster.
 */
export class FlowGates {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
  ) {}

  /**
   * The pending run of `debounce.key`, or `newRunId` as it. `stale`: a run the key named that has
   * started since (its input can no longer change): the key is taken over by the new run.
   */
  async debounce(tenant: string, debounce: Debounce, newRunId: string, stale = ''): Promise<DebounceOutcome> {
    const [kind, runId, delayMs] = await runScript<[string, string, number?]>(
      this.redis,
      DEBOUNCE,
      [this.keys.flowKey(tenant, 'debounce', debounce.key)],
      [
        debounce.delayMs,
        debounce.maxDelayMs ?? DEFAULT_DEBOUNCE_MAX_DELAY_MS,
        debounce.mode ?? 'trailing',
        newRunId,
        stale,
      ],
    );
    return kind === 'drop' ? { kind, runId } : { kind: kind as 'new' | 'join', runId, delayMs: Number(delayMs) };
  }

  /** How long `runId` waits before it starts under `throttle` (0: now); asked again, the same start. */
  async throttle(tenant: string, throttle: Throttle, runId: string): Promise<number> {
    const key = this.keys.flowKey(tenant, 'throttle', throttle.key);
    return Number(await runScript<number>(this.redis, THROTTLE, [key], [throttle.limit, throttle.periodMs, runId]));
  }

  /** Gives back the start a throttle gave `runId` (the run was not created after all). */
  async unthrottle(tenant: string, throttle: Throttle, runId: string): Promise<void> {
    await this.redis.zrem(this.keys.flowKey(tenant, 'throttle', throttle.key), runId);
  }
}
