import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { AgentqError } from '../../shared/contracts/errors.js';

/** How often a healthy connection is probed with a PING (only while requests come in). */
const PROBE_EVERY_MS = 200;

interface Health {
  /** False after a PING failed (a stopped Redis keeps its socket open: the PING times out), until one answers. */
  answering: boolean;
  probing: boolean;
  lastProbeAt: number;
}

const healthOf = new WeakMap<RedisConnection, Health>();

/**
 * A stopped Redis (SIGSTOP, a stalled host) keeps its TCP connection open, so the connection stays
 * `ready` and every command waits out the command timeout. Requests probe the connection with a PING
 * now and then; once a PING has timed out, requests fail at once until a PING answers again, so only
 * the requests already in flight when Redis stopped wait the command timeout.
 */
function probe(redis: RedisConnection): Health {
  let health = healthOf.get(redis);
  if (!health) {
    const created: Health = { answering: true, probing: false, lastProbeAt: 0 };
    redis.on('ready', () => (created.answering = true));
    healthOf.set(redis, created);
    health = created;
  }
  const state = health;
  if (!state.probing && Date.now() - state.lastProbeAt >= (state.answering ? PROBE_EVERY_MS : 0)) {
    state.probing = true;
    state.lastProbeAt = Date.now();
    redis.ping().then(
      () => {
        state.answering = true;
        state.probing = false;
      },
      () => {
        state.answering = false;
        state.probing = false;
      },
    );
  }
  return state;
}

/**
 * Fails fast unless the connection is up: a connection still making its first attempt gets up to
 * `waitMs`; one that is reconnecting (Redis went away) fails at once, so "Redis down" answers 503
 * immediately instead of after a command timeout; so does a connected Redis that stopped answering.
 */
export async function requireRedis(redis: RedisConnection, waitMs = 500): Promise<void> {
  if (redis.status === 'ready') {
    if (probe(redis).answering) return;
    throw new AgentqError(
      'UNAVAILABLE',
      'Redis is not answering (connected, but a PING timed out); try again shortly',
      { retryable: true },
    );
  }
  const unavailable = () =>
    new AgentqError('UNAVAILABLE', `Redis is not reachable (connection ${redis.status}); try again shortly`, {
      retryable: true,
    });
  if (!['wait', 'connecting', 'connect'].includes(redis.status)) throw unavailable();
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('reconnecting', onFailed);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => done();
    const onFailed = () => done(unavailable());
    const timer = setTimeout(onFailed, waitMs);
    redis.once('ready', onReady);
    redis.once('reconnecting', onFailed);
  });
}
