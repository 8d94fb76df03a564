import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { RedisConnection } from '../../../shared/redis/connect-redis.js';
import type { Keys } from '../../../shared/store/keys.js';
import { runScript } from '../../../shared/redis/create-redis.js';
import { ApiError } from '../errors.js';
import { requireRedis } from '../redis-ready.js';
import { COUNT_IN_WINDOW } from '../../../shared/operations/limits/rate-limiter.js';

const WINDOW_MS = 60_000;

/**
 * A connection that forwards for others (a proxy trusted by hop count) may carry this many clients' failures
 * before its own count refuses: it bounds a peer that rotates X-Forwarded-For without limiting one proxy's
 * clients to one client's share.
 */
const PROXY_FAN_IN = 10;

/** Who presented a wrong credential, and what it presented. */
export interface AuthAttempt {
  /** The client's address (request.ip: X-Forwarded-For's, as far as AGENTQ_TRUST_PROXY believes it). */
  address: string;
  /** The connection's own address, when it differs from `address` (a proxy, or a peer that says it is one). */
  peer?: string;
  /** The credential presented (only its hash is kept). */
  credential: string;
}

/** A request's attempt: its client address, its connection's and the credential it presented. */
export function attemptOf(request: FastifyRequest, credential: string): AuthAttempt {
  const peer = request.socket?.remoteAddress;
  return { address: request.ip, ...(peer && peer !== request.ip ? { peer } : {}), credential };
}

/**
 * Failed authentications per minute, counted in Redis so every API process shares the counts (fixed
 * one-minute windows, like the request rate limiter): per client address, per credential presented, and
 * per connection when it forwards for others. A correct key is never refused, whatever these counts say:
 * the throttle locks the guessing, not the owner. A wrong one past a limit answers 429 with Retry-After
 * instead of 401, until the window ends.
 */
export class AuthThrottle {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    /** Failures per address (and per credential) per minute before 429; 0 = no limit. */
    readonly perMinute: number,
  ) {}

  /** Counts one failure: the answer is `error` (the 401), or 429 once a count is past its limit. */
  async failed(attempt: AuthAttempt, error: ApiError, now = Date.now()): Promise<ApiError> {
    if (this.perMinute === 0) return error;
    await requireRedis(this.redis);
    const window = windowOf(now);
    const digest = createHash('sha256').update(attempt.credential).digest('hex').slice(0, 32);
    const counts = [
      { subject: `addr:${attempt.address}`, limit: this.perMinute, who: `from ${attempt.address}` },
      { subject: `cred:${digest}`, limit: this.perMinute, who: 'with this credential' },
      ...(attempt.peer
        ? [{ subject: `peer:${attempt.peer}`, limit: this.perMinute * PROXY_FAN_IN, who: `through ${attempt.peer}` }]
        : []),
    ];
    const failures = await Promise.all(
      counts.map(({ subject }) =>
        runScript<number>(this.redis, COUNT_IN_WINDOW, [this.keys.authFailures(subject, window)], [WINDOW_MS + 1000]),
      ),
    );
    const over = counts.findIndex((count, index) => failures[index]! > count.limit);
    return over === -1 ? error : this.tooMany(counts[over]!, failures[over]!, now);
  }

  private tooMany(count: { who: string; limit: number }, failures: number, now: number): ApiError {
    const retryAfter = Math.max(1, Math.ceil(((windowOf(now) + 1) * WINDOW_MS - now) / 1000));
    return new ApiError(
      429,
      'RATE_LIMITED',
      `${failures} failed authentications ${count.who} this minute (more than ${count.limit}, AGENTQ_AUTH_FAILURES_PER_MINUTE=${this.perMinute}); check the key and retry after ${retryAfter} s`,
      { headers: { 'retry-after': String(retryAfter) } },
    );
  }
}

function windowOf(now: number): number {
  return Math.floor(now / WINDOW_MS);
}
