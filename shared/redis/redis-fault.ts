import { AgentqError } from '../contracts/errors.js';

/**
 * What a Redis infrastructure fault means for the caller: `full` (maxmemory reached with noeviction:
 * writes refused, reads fine) or `unavailable` (connection lost, a replica or a loading/failing-over
 * server). Neither says anything about the work that met it: it is not the node's failure, and must not
 * spend a step's attempt.
 */
export type RedisFaultKind = 'full' | 'unavailable';

/** Redis's own error replies that are about the server's state, not the command. */
const FULL = /^(OOM|EXECABORT[^\n]*OOM)\b|\bOOM command not allowed/;
const SERVER = /^(READONLY|LOADING|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|BUSY|NOREPLICAS|MISCONF)\b/;
/**
 * ioredis's own words for a connection that is gone, or a command that waited for one too long. Not bare
 * socket codes (ECONNREFUSED, …): a model endpoint or a vector store says those too, and their failures
 * must keep spending attempts.
 */
const CONNECTION =
  /^(Connection is closed|Stream isn't writeable|Reached the max retries per request|Command timed out|Connection is in (closing|closed))|Redis is not reachable/;

/** The fault in `error` or its causes (up to 4 deep), or undefined when it is something else. */
export function redisFaultOf(error: unknown): RedisFaultKind | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth += 1) {
    if (AgentqError.isInstance(current)) {
      if (current.code === 'REDIS_FULL') return 'full';
      if (current.code === 'REDIS_UNAVAILABLE') return 'unavailable';
    }
    const message = current.message;
    if (FULL.test(message)) return 'full';
    // EXECABORT alone: a transaction discarded for an earlier refused command (OOM during MULTI).
    if (/^EXECABORT\b/.test(message)) return 'full';
    if (current.name === 'MaxRetriesPerRequestError' || SERVER.test(message) || CONNECTION.test(message))
      return 'unavailable';
    // ioredis keeps a pipeline's or transaction's first error in `previousErrors`.
    const previous = (current as { previousErrors?: unknown[] }).previousErrors?.[0];
    current = previous instanceof Error ? previous : current.cause;
  }
  return undefined;
}

/**
 * `error` as the AgentqError producers get for a Redis fault: REDIS_FULL or REDIS_UNAVAILABLE (retryable),
 * with a message that says what happened and what to do; any other error as it is.
 */
export function asRedisFaultError(error: unknown, doing: string): unknown {
  const kind = redisFaultOf(error);
  if (!kind || (AgentqError.isInstance(error) && error.code.startsWith('REDIS_'))) return error;
  const detail = error instanceof Error ? error.message.split('\n')[0]!.slice(0, 160) : String(error);
  return kind === 'full'
    ? new AgentqError(
        'REDIS_FULL',
        `Redis is full and refused to ${doing} (${detail}): nothing was changed. Retry shortly; if it persists, give Redis more memory (maxmemory) or let finished runs expire sooner (AGENTQ_RETENTION_SECONDS)`,
        { retryable: true, retryAfterMs: 1000, cause: error },
      )
    : new AgentqError(
        'REDIS_UNAVAILABLE',
        `Redis did not answer while trying to ${doing} (${detail}); retry shortly, and check that Redis is up and reachable (REDIS_URL)`,
        { retryable: true, retryAfterMs: 1000, cause: error },
      );
}

interface RetryWhileFaultyOptions {
  /** Between tries. @default 500 */
  intervalMs?: number;
  /** Give up after this long (the work is then lost: `onGiveUp` says so). */
  untilMs: number;
  onGiveUp?: (error: unknown) => void;
}

/**
 * Runs `work` again and again in the background while it fails with a Redis fault (every `intervalMs`,
 * for up to `untilMs`): what must reach Redis once it accepts writes again (a paid response's memo, a
 * budget count) without holding up the caller. Another error ends it at once (`onGiveUp`).
 */
export function retryWhileRedisFaulty(
  work: () => Promise<unknown>,
  { intervalMs = 500, untilMs, onGiveUp }: RetryWhileFaultyOptions,
): Promise<boolean> {
  const giveUpAt = Date.now() + untilMs;
  return new Promise<boolean>((resolve) => {
    const attempt = () => {
      work().then(
        () => resolve(true),
        (error: unknown) => {
          if (redisFaultOf(error) && Date.now() + intervalMs < giveUpAt) {
            setTimeout(attempt, intervalMs).unref();
            return;
          }
          onGiveUp?.(error);
          resolve(false);
        },
      );
    };
    setTimeout(attempt, intervalMs).unref();
  });
}
