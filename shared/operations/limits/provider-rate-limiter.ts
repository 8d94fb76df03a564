import { randomUUID } from 'node:crypto';
import type { RedisConnection } from '../../redis/connect-redis.js';
import type { Keys } from '../../store/keys.js';
import { runScript } from '../../redis/create-redis.js';
import { luaScript } from '../../redis/lua-script.js';
import type { ProviderLimits } from '../../llm/rate-limit-table.js';

/**
 * Takes a request slot if both the request and the token budget of the last 60 s allow it.
 * Members are `<ms>:<id>:<tokens>`; the window is exact (a log, not a bucket), so no 60-s window ever
 * holds more than the limits, whatever the number of workers.
 * KEYS[1] the log · ARGV: 1 requests/window (0 = none) · 2 tokens/window (0 = none) · 3 tokens asked · 4 id
 *   · 5 window ms
 * → {0, member} granted | {wait ms, ''} refused | {-1, ''} never (asked more tokens than the window allows)
 */
const ACQUIRE = luaScript(new URL('./lua/acquire-provider-slot-1.lua', import.meta.url));

/**
 * Replaces a granted slot's estimated tokens by the tokens the response actually used, and moves the
 * entry to the time it was settled: the provider counted the request when it arrived, a little after
 * the grant (cold starts, a busy event loop), so a window counted from grant times alone could hold a
 * few more requests than the provider sees in its own window. The response came after the arrival, so
 * counting from then is never early.
 * KEYS[1] the log · ARGV: 1 member · 2 actual tokens → 1 replaced, 0 gone (left the window)
 */
const SETTLE = luaScript(new URL('./lua/settle-provider-slot-1.lua', import.meta.url));

export type AcquireResult =
  { granted: true; ticket: string } | { granted: false; retryAfterMs: number; impossible?: boolean };

/**
 * Provider limits shared by every worker (requests/min and tokens/min per provider+model), so a fleet of
 * workers stays within what the provider allows. A step that would exceed them is told how long to
 * wait; the step processor parks it for that long without spending an attempt.
 */
export class ProviderRateLimiter {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    /** The limits are per this window. @default 60000 (per minute) */
    private readonly windowMs = 60_000,
  ) {}

  /** Asks for one request that may use `tokens` (estimated prompt tokens + max_tokens). */
  async acquire(provider: string, model: string, limits: ProviderLimits, tokens: number): Promise<AcquireResult> {
    if (limits.requestsPerMinute <= 0 && limits.tokensPerMinute <= 0) return { granted: true, ticket: '' };
    const [wait, member] = await runScript<[number, string]>(
      this.redis,
      ACQUIRE,
      [this.keys.providerLimit(provider, model)],
      [
        limits.requestsPerMinute,
        limits.tokensPerMinute,
        Math.max(0, Math.round(tokens)),
        randomUUID().slice(0, 8),
        this.windowMs,
      ],
    );
    if (wait === 0) return { granted: true, ticket: member };
    if (wait < 0) return { granted: false, retryAfterMs: this.windowMs, impossible: true };
    return { granted: false, retryAfterMs: wait };
  }

  /** Reconciles a granted request with the response's real usage. */
  async settle(provider: string, model: string, ticket: string, actualTokens: number): Promise<void> {
    if (!ticket) return;
    await runScript(
      this.redis,
      SETTLE,
      [this.keys.providerLimit(provider, model)],
      [ticket, Math.max(0, Math.round(actualTokens))],
    );
  }
}
