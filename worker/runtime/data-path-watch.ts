import type { RedisConnection } from '../../shared/redis/connect-redis.js';

export interface DataPathWatchOptions {
  /** The connections a step commits through: each gets a PING per interval. */
  connections: RedisConnection[];
  intervalMs: number;
  /** Unanswered (or failing) this long, the data path is failing (AGENTQ_STEP_REDIS_TIMEOUT_MS). */
  failingAfterMs: number;
  /** Told once when the data path starts failing, and once when it answers again. */
  onChange(failing: boolean, failedForMs: number): void;
}

/** After a failed PING, the next one (a Redis that answers errors at once, LOADING, must not spin). */
const RETRY_MS = 100;

export interface DataPathWatch {
  readonly failing: boolean;
  stop(): void;
}

/**
 * Whether this process can still reach Redis on the connections it commits through, not only on the
 * liveness thread's own: a connection can go silent (replies stop, the socket stays open) while another
 * to the same Redis keeps answering, and a worker that beats on the one while its steps hang on the other
 * holds their locks for nothing.
 *
 * Every `intervalMs` each connection gets a PING (one at a time per connection). Time during which a
 * PING is unanswered or failed counts against the path; `failingAfterMs` of it makes the path failing,
 * and the first answer of every connection makes it well again. A tick that comes late counts for at
 * most two intervals: a blocked event loop (a long synchronous parse) delays the replies it has not read
 * yet, and that is the busy main thread the liveness thread exists to cover, not a Redis fault.
 */
export function watchDataPath({
  connections,
  intervalMs,
  failingAfterMs,
  onChange,
}: DataPathWatchOptions): DataPathWatch {
  const waiting = new Set<RedisConnection>();
  const failed = new Set<RedisConnection>();
  let badMs = 0;
  let failing = false;
  let lastTick = Date.now();
  let stopped = false;
  const recovered = () => {
    if (waiting.size > 0 || failed.size > 0) return;
    const was = badMs;
    badMs = 0;
    if (failing) {
      failing = false;
      onChange(false, was);
    }
  };
  const probe = (connection: RedisConnection) => {
    waiting.add(connection);
    connection.ping().then(
      () => {
        waiting.delete(connection);
        failed.delete(connection);
        recovered();
      },
      () => {
        waiting.delete(connection);
        failed.add(connection);
        // Asked again at once rather than at the next tick: the first answer after an outage ends the
        // withdrawal, before peers that beat again sooner take this process's lapsed key for death.
        const again = setTimeout(() => {
          if (!stopped && !waiting.has(connection)) probe(connection);
        }, RETRY_MS);
        again.unref();
      },
    );
  };
  const tick = () => {
    const now = Date.now();
    const elapsed = Math.min(now - lastTick, 2 * intervalMs);
    lastTick = now;
    if (waiting.size > 0 || failed.size > 0) {
      badMs += elapsed;
      if (!failing && badMs >= failingAfterMs) {
        failing = true;
        onChange(true, badMs);
      }
    }
    for (const connection of connections) if (!waiting.has(connection)) probe(connection);
  };
  const timer = setInterval(tick, intervalMs);
  timer.unref();
  return {
    get failing() {
      return failing;
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
