import { isCluster, type RedisConnection } from '../redis/connect-redis.js';
import { runScript } from '../redis/create-redis.js';
import { luaScript } from '../redis/lua-script.js';
import type { TokenEvent } from '../contracts/token-event.js';
import type { Keys } from './keys.js';

/** KEYS: 1 the token log · ARGV: 1 channel, 2 cap, 3 expiry ms, 4 event JSON, 5 runId, 6 cluster, 7 kept form → its id or false. */
const APPEND = luaScript(new URL('./lua/append-token-1.lua', import.meta.url));

/** KEYS: 1 the token log · ARGV: 1 expiry ms → [last id, 1 if it existed else 0]. */
const WATCH = luaScript(new URL('./lua/watch-tokens-1.lua', import.meta.url));

/** KEYS: 1 the token log · ARGV: 1 channel, 2 cluster → 1 when someone follows the run, else 0. */
const FOLLOWED = luaScript(new URL('./lua/tokens-followed-1.lua', import.meta.url));

export interface TokenLogOptions {
  /** AGENTQ_TOKEN_LOG_MAXLEN: tokens kept, about (whole blocks of ~100). @default 2000 */
  maxLen?: number;
  /** AGENTQ_TOKEN_LOG_TTL_MS: how long a log outlives its last token or visit. @default 15 minutes */
  ttlMs?: number;
}

/** One entry of a run's token log: a token, or the marker its first follower made (no event). */
export interface TokenLogEntry {
  id: string;
  event: TokenEvent | null;
}

/**
 * A run's live tokens, kept while someone follows the run so a follower that reconnects gets the ones it
 * missed. The log exists only once a follower has `watch`ed the run: before that a token is only
 * published, and a run nobody follows costs no durable byte per token. The log is a Redis stream, capped
 * (XADD MAXLEN ~) and expiring, whose ids say by their sequence when entries were trimmed away.
 */
export class TokenLog {
  readonly maxLen: number;
  readonly ttlMs: number;

  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
    { maxLen = 2000, ttlMs = 15 * 60 * 1000 }: TokenLogOptions = {},
  ) {
    this.maxLen = maxLen;
    this.ttlMs = ttlMs;
  }

  /**
   * Publishes a token on the run's channel, keeping it in the log first when the log exists.
   * → the token's log id, or null when nobody follows the run.
   */
  async append(event: TokenEvent): Promise<string | null> {
    const { runId, id: _id, ...kept } = event;
    const id = await runScript<string | null>(
      this.redis,
      APPEND,
      [this.keys.tokenLog(runId)],
      [
        this.keys.tokenChannel(runId),
        this.maxLen,
        this.ttlMs,
        JSON.stringify(kept),
        runId,
        isCluster(this.redis) ? '1' : '0',
        JSON.stringify(keptForm(event)),
      ],
    );
    return id || null;
  }

  /** Whether anyone follows the run's tokens now (its log exists, or its channel has a subscriber). */
  async followed(runId: string): Promise<boolean> {
    const reply = await runScript<number>(
      this.redis,
      FOLLOWED,
      [this.keys.tokenLog(runId)],
      [this.keys.tokenChannel(runId), isCluster(this.redis) ? '1' : '0'],
    );
    return reply === 1;
  }

  /**
   * A follower starts or keeps the run's log (made when missing, its expiry renewed). → the log's last
   * id, and whether the log existed (a follower resuming after an id of a log that is gone missed tokens).
   */
  async watch(runId: string): Promise<{ lastId: string; existed: boolean }> {
    const [lastId, existed] = await runScript<[string, number]>(
      this.redis,
      WATCH,
      [this.keys.tokenLog(runId)],
      [this.ttlMs],
    );
    return { lastId, existed: existed === 1 };
  }

  /** The entries after `after`, oldest first, at most `count`. */
  async read(runId: string, after: string, count = 500): Promise<TokenLogEntry[]> {
    const reply = await this.redis.xrange(this.keys.tokenLog(runId), `(${after}`, '+', 'COUNT', count);
    return reply.map(([id, fields]) => ({ id, event: entryEvent(runId, id, fields) }));
  }
}

/**
 * What the log keeps of a token: its fields by position, without their names or the run id (the key
 * says it) — every byte is written to the AOF once per token of a followed run.
 */
function keptForm({ type, step, task, node, attempt, call, index, text }: TokenEvent): unknown[] {
  return type === 'token' ? [step, task, node, attempt, call, index, text] : [step, task, node, attempt];
}

function entryEvent(runId: string, id: string, fields: string[]): TokenEvent | null {
  const at = fields.indexOf('e');
  if (at < 0 || at % 2 !== 0) return null;
  try {
    const [step, task, node, attempt, call, index, text] = JSON.parse(fields[at + 1]!) as [
      number,
      number,
      string,
      number,
      string?,
      number?,
      string?,
    ];
    const head = { id, runId, step, task, node, attempt };
    return text === undefined ? { type: 'token-reset', ...head } : { type: 'token', ...head, call, index, text };
  } catch {
    return null;
  }
}
