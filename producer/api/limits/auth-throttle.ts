import type { RedisConnection } from '../../../shared/redis/connect-redis.js';
import type { Keys } from '../../../shared/store/keys.js';
import { runScript } from '../../../shared/redis/create-redis.js';
import { ApiError } from '../errors.js';
import { requireRedis } from '../redis-ready.js';
import { COUNT_IN_WINDOW } from '../../../shared/operations/limits/rate-limiter.js';

const WINDOW_MS = 60_000;

/**
 * Failed authentications per client address per minute, counted in Redis so every API process shares
 * the count (fixed one-minute windows, like the request rate limiter). Past the limit the address gets
 * 429 with Retry-After for every credential it presents until the window ends, the right key included:
 * otherwise the answer to a guess would still tell a good key from a bad one.
 */
export class AuthThrottle {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    /** Failures per address per minute before 429; 0 = no limit. */
    readonly perMinute: number,
  ) {}

  /** Before a presented credential is checked: 429 while `address` is over its failures, else null. */
  async refusal(address: string, now = Date.now()): Promise<ApiError | null> {
    if (this.perMinute === 0) return null;
    // A connection still starting is waited for (briefly); one that is down answers 503 at once.
    await requireRedis(this.redis);
    const failures = Number((await this.redis.get(this.keys.authFailures(address, windowOf(now)))) ?? 0);
    return failures >= this.perMinute ? this.tooMany(address, failures, now) : null;
  }

  /** Counts one failure of `address`: the answer is `error` (the 401), or 429 once past the limit. */
  async failed(address: string, error: ApiError, now = Date.now()): Promise<ApiError> {
    if (this.perMinute === 0) return error;
    await requireRedis(this.redis);
    const key = this.keys.authFailures(address, windowOf(now));
    const failures = await runScript<number>(this.redis, COUNT_IN_WINDOW, [key], [WINDOW_MS + 1000]);
    return failures > this.perMinute ? this.tooMany(address, failures, now) : error;
  }

  private tooMany(address: string, failures: number, now: number): ApiError {
    const retryAfter = Math.max(1, Math.ceil(((windowOf(now) + 1) * WINDOW_MS - now) / 1000));
    return new ApiError(
      429,
      'RATE_LIMITED',
      `${failures} failed authentications from ${address} this minute (more than AGENTQ_AUTH_FAILURES_PER_MINUTE=${this.perMinute}); check the key and retry after ${retryAfter} s`,
      { headers: { 'retry-after': String(retryAfter) } },
    );
  }
}

function windowOf(now: number): number {
  return Math.floor(now / WINDOW_MS);
}
