import type { RedisConnection } from '../../redis/connect-redis.js';
import type { Keys } from '../../store/keys.js';
import { runScript } from '../../redis/create-redis.js';
import { luaScript } from '../../redis/lua-script.js';

/** Counts an event in a fixed window (requests, failed authentications). KEYS and ARGV: the header of lua/count-in-window-1.lua. */
export const COUNT_IN_WINDOW = luaScript(new URL('./lua/count-in-window-1.lua', import.meta.url));
/** Takes one event back out of its window. KEYS: the header of lua/give-back-in-window-1.lua. */
const GIVE_BACK_IN_WINDOW = luaScript(new URL('./lua/give-back-in-window-1.lua', import.meta.url));

const WINDOW_MS = 60_000;

interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (the Retry-After of a refusal). */
  resetSeconds: number;
  /** The window it was counted in (giveBack takes it). */
  window: number;
}

/**
 * Requests per API key per minute, counted in Redis so every API process shares one budget. Fixed
 * one-minute windows: one INCR per request; a key may burst up to twice its limit across a window edge.
 */
export class RateLimiter {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    /** Requests per key per minute; 0 = unlimited. */
    readonly perMinute: number,
  ) {}

  async consume(keyId: string, now = Date.now()): Promise<RateDecision> {
    const window = Math.floor(now / WINDOW_MS);
    const resetSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
    if (this.perMinute === 0) return { allowed: true, limit: 0, remaining: 0, resetSeconds, window };
    const key = this.keys.apiRateLimit(keyId, window);
    const count = await runScript<number>(this.redis, COUNT_IN_WINDOW, [key], [WINDOW_MS + 1000]);
    return {
      allowed: count <= this.perMinute,
      limit: this.perMinute,
      remaining: Math.max(0, this.perMinute - count),
      resetSeconds,
      window,
    };
  }

  /** Takes back one request `consume` counted in `window`: what it stood for never happened. */
  async giveBack(keyId: string, window: number): Promise<void> {
    if (this.perMinute === 0) return;
    await runScript<number>(this.redis, GIVE_BACK_IN_WINDOW, [this.keys.apiRateLimit(keyId, window)], []);
  }
}
