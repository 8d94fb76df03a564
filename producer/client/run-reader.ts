import { ChildLinks, type ChildPage } from '../../shared/store/child-links.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { connectRedis, type RedisConnection } from '../../shared/redis/connect-redis.js';
import { throughOutage, whenRedisReady } from './redis-ready.js';
import {
  RedisRunStore,
  type ListFilter,
  type ReindexPass,
  type ReindexPassOptions,
  type ReindexPosition,
} from '../../shared/store/redis-run-store.js';
import { withPartialOutput } from './partial-output.js';
import { readRedisConfig, type RedisConfig } from '../../shared/config/redis-config.js';
import type { RunFinishedHook } from '../../shared/operations/runs/run-finished-hook.js';
import {
  isTerminal,
  type Message,
  type RunEvent,
  type RunRecord,
  type StepRecord,
} from '../../shared/contracts/run-record.js';
import { followRun, type RunStreamEvent } from './follow-run.js';
import { TokenHub } from './token-hub.js';
import { readMessagePage, readStepPage, type ListPage, type ListPageRequest } from './run-list-pages.js';
import type { RunResult } from '../../shared/contracts/run-result.js';
import { readRunResult } from '../../shared/store/read-run-result.js';
import { Conversations, type ConversationRecord } from '../../shared/store/conversations.js';

export interface RunReaderOptions {
  /** Where Redis is and how the run store is laid out. @default readRedisConfig() (the environment's Redis settings only) */
  config?: RedisConfig;
  /** Tenant for enqueue and list when a request names none. @default config.tenant */
  tenant?: string;
}

/**
 * The read side of the producer: read runs, list them, wait for them, follow their events, purge a
 * finished one. It holds one Redis connection and no queue, so it loads neither BullMQ nor the
 * enqueue path: the CLI's read commands (`status`, `runs`, `steps`, `wait`, `events`, `purge`) start on
 * it alone (CLI cold start). `AgentClient` is this plus the commands that add jobs.
 *
 * Reads by run id are not tenant-scoped: this is for trusted backends; the HTTP API scopes by the
 * caller's key. Fails fast when Redis is down (no offline queue, a command timeout).
 */
export class RunReader {
  readonly store: RedisRunStore;
  protected readonly config: RedisConfig;
  protected readonly tenant: string;
  protected readonly redis: RedisConnection;
  private readonly readers = new Set<RedisConnection>();
  private tokens: TokenHub | undefined;
  private readyWait: Promise<void> | undefined;
  /** The store's hook for runs this process finishes (AgentClient's cancel); none for reads. */
  protected readonly runFinished: RunFinishedHook | undefined;

  /**
   * `finishedHook` builds the store's `onFinished` on its connection (AgentClient passes the workers' hook).
   * Without `config` only the Redis settings are read (not the whole configuration, which needs zod):
   * the CLI's read commands start on this.
   */
  constructor(options: RunReaderOptions = {}, finishedHook?: (redis: RedisConnection) => RunFinishedHook) {
    this.config = options.config ?? readRedisConfig();
    this.tenant = options.tenant ?? this.config.tenant;
    this.redis = connectRedis(this.config, 'producer', this.config.redisCommandTimeoutMs);
    this.redis.on('error', () => undefined); // surfaced per command instead
    this.runFinished = finishedHook?.(this.redis);
    this.store = new RedisRunStore(this.redis, {
      keyPrefix: this.config.keyPrefix,
      shards: this.config.shards,
      retentionSeconds: this.config.retentionSeconds,
      eventsMaxLen: this.config.eventsMaxLen,
      tokenLog: { maxLen: this.config.tokenLogMaxLen, ttlMs: this.config.tokenLogTtlMs },
      recording: { mode: this.config.recording, maxBytes: this.config.recordingMaxBytes },
      ...(this.runFinished ? { onFinished: this.runFinished } : {}),
    });
  }

  /** Waits until Redis answers (connections are made at once but answer later), failing fast if it does not. */
  protected async ready(): Promise<void> {
    if (this.redis.status === 'ready') return;
    // One wait shared by every call made meanwhile: a listener each would pile up while Redis is down.
    this.readyWait ??= whenRedisReady(this.redis, this.config, this.config.redisCommandTimeoutMs + 1000).finally(
      () => (this.readyWait = undefined),
    );
    await this.readyWait;
  }

  /**
   * `read`'s answer (a call of this client), tried again through a Redis restart of up to `outageMs`:
   * for what polls, as `agentq batch` does, and must outlast an outage rather than fail at its first second.
   */
  throughOutage<T>(read: () => Promise<T>, { outageMs }: { outageMs: number }): Promise<T> {
    return throughOutage(read, { redis: this.redis, target: this.config, outageMs });
  }

  /** The run record; a cancelled run's carries its last committed state as `output.partial`. */
  async get(runId: string): Promise<RunRecord | null> {
    await this.ready();
    const record = await this.store.reads.record(runId);
    return record && withPartialOutput(record, (id) => this.store.reads.state(id));
  }

  protected async require(runId: string): Promise<RunRecord> {
    const record = await this.get(runId);
    if (!record)
      throw new AgentqError(
        'NOT_FOUND',
        `run ${runId} not found (it may never have existed, or it expired or was purged)`,
      );
    return record;
  }

  async steps(runId: string): Promise<StepRecord[]> {
    await this.require(runId);
    return this.store.reads.steps(runId);
  }

  /** The runs this run's steps started (context.runGraph), a page at a time: pass `nextCursor` back as `cursor`. */
  async children(runId: string, page: { cursor?: string; limit?: number } = {}): Promise<ChildPage> {
    await this.require(runId);
    return new ChildLinks(this.store.redis, this.store.keys).list(runId, page);
  }

  async messages(runId: string): Promise<Message[]> {
    await this.require(runId);
    return this.store.reads.messages(runId);
  }

  /**
   * One page of the run's steps, as `GET /v1/runs/:id/steps` answers it: at most `limit` (1000) steps
   * from `cursor` and about 4 MiB; `nextCursor` (null on the last page) is the next page's `cursor`.
   * `steps()` reads them all at once; this reads a window, whatever the run's length.
   */
  async stepPage(runId: string, request: ListPageRequest = {}): Promise<ListPage<'steps', StepRecord>> {
    await this.require(runId);
    return readStepPage(this.store, runId, request);
  }

  /** One page of the run's history, oldest first, as `GET /v1/runs/:id/messages` answers it (see `stepPage`). */
  async messagePage(runId: string, request: ListPageRequest = {}): Promise<ListPage<'messages', Message>> {
    await this.require(runId);
    return readMessagePage(this.store, runId, request);
  }

  /** The run's result object: answer, tool executions, intermediate responses, sources, finishReason (RunResult). */
  async result(runId: string): Promise<RunResult> {
    await this.ready();
    const meta = await this.store.reads.get(runId);
    if (!meta)
      throw new AgentqError(
        'NOT_FOUND',
        `run ${runId} not found (it may never have existed, or it expired or was purged)`,
      );
    return readRunResult(this.store, meta);
  }

  /**
   * A conversation of the client's tenant (or `tenant`): its turns, the unfinished ones, and the history
   * of its latest completed turn; NOT_FOUND when there is none with this id.
   */
  async conversation(
    conversationId: string,
    { tenant = this.tenant }: { tenant?: string } = {},
  ): Promise<ConversationRecord> {
    await this.ready();
    const record = await new Conversations(this.store).get(tenant, conversationId);
    if (!record) throw conversationNotFound(conversationId);
    return record;
  }

  /** Clears what a conversation remembers (its next turn starts afresh; its runs stay); NOT_FOUND when there is none. */
  async clearConversation(conversationId: string, { tenant = this.tenant }: { tenant?: string } = {}): Promise<void> {
    await this.ready();
    if (!(await new Conversations(this.store).clear(tenant, conversationId)))
      throw conversationNotFound(conversationId);
  }

  async list(filter: ListFilter & { tenant?: string } = {}): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
    await this.ready();
    return this.store.reads.list(filter.tenant ?? this.tenant, filter);
  }

  /** Resolves with the run once it is finished (or waiting for input), or rejects after `timeoutMs`. */
  async wait(
    runId: string,
    { timeoutMs = 10 * 60_000, signal }: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<RunRecord> {
    const deadline = Date.now() + timeoutMs;
    let after = '0-0';
    const reader = this.reader();
    try {
      for (;;) {
        // Checked once per (at most one second) turn: whoever stopped waiting frees the reader soon after.
        if (signal?.aborted)
          throw new AgentqError('CANCELLED', `stopped waiting for run ${runId}: ${String(signal.reason ?? 'aborted')}`);
        const record = await this.require(runId);
        if (isTerminal(record.status) || record.status === 'waiting') return record;
        const left = deadline - Date.now();
        if (left <= 0)
          throw new AgentqError('TIMEOUT', `run ${runId} is still ${record.status} after ${timeoutMs} ms`, {
            retryable: true,
          });
        const events = await this.store.eventLog.events(runId, {
          after,
          blockMs: Math.min(left, 1000),
          connection: reader,
        });
        if (events.length > 0) after = events.at(-1)!.id;
      }
    } finally {
      this.release(reader);
    }
  }

  /** Deletes a finished run now instead of at the end of its retention. */
  async purge(runId: string): Promise<void> {
    const record = await this.require(runId);
    if (!isTerminal(record.status))
      throw new AgentqError('CONFLICT', `run ${runId} is ${record.status}; cancel it before purging`);
    await this.store.retention.purge(runId, record.tenant);
  }

  /**
   * Rebuilds the tenants' run lists (or `tenant`'s) from the runs that exist, scanning the whole keyspace
   * a bounded SCAN pass at a time (`count` keys each; every master of a Cluster): a run missing from its
   * tenant's list is put back. It adds entries only. → runs found, and how many of them were missing.
   */
  async reindex({ tenant, count }: ReindexPassOptions = {}): Promise<{ runs: number; added: number }> {
    await this.ready();
    const total = { runs: 0, added: 0 };
    let position: ReindexPosition | null = null;
    do {
      const pass: ReindexPass = await this.store.indexRepair.pass(position, {
        ...(tenant === undefined ? {} : { tenant }),
        ...(count === undefined ? {} : { count }),
      });
      total.runs += pass.runs;
      total.added += pass.added;
      position = pass.next;
    } while (position);
    return total;
  }

  /** The run's events from the start (or after `after`), ending after `run-end`. */
  async *events(runId: string, { after = '0-0' }: { after?: string } = {}): AsyncGenerator<RunEvent> {
    const reader = this.reader();
    try {
      let cursor = after;
      for (;;) {
        const events = await this.store.eventLog.events(runId, { after: cursor, blockMs: 1000, connection: reader });
        for (const event of events) {
          cursor = event.id;
          yield event;
          if (event.type === 'run-end') return;
        }
        if (events.length === 0) {
          const record = await this.store.reads.record(runId);
          if (!record) return;
          if (isTerminal(record.status)) {
            // run-end may have been trimmed away or already read; drain what is left and stop.
            const rest = await this.store.eventLog.events(runId, { after: cursor });
            for (const event of rest) yield event;
            return;
          }
        }
      }
    } finally {
      this.release(reader);
    }
  }

  /**
   * Follows a run live: its committed events (as `events()`) and the model's text as it streams
   * (`token` / `token-reset`, and `token-gap` when missed tokens were no longer kept), ending after
   * `run-end`. A dropped connection costs no token: the missed ones come from the run's token log.
   * `after` takes an event id or an SSE stream's `Last-Event-ID` (`<event id>_<token id>`).
   * `for await (const event of client.stream(runId))`.
   */
  stream(runId: string, { after = '0-0' }: { after?: string } = {}): AsyncGenerator<RunStreamEvent> {
    this.tokens ??= new TokenHub(this.store.keys, () => connectRedis(this.config, 'subscriber'));
    const reader = this.reader();
    return followRun({
      store: this.store,
      events: { reader },
      tokens: this.tokens,
      runId,
      after,
      release: () => this.release(reader),
      ready: () => this.ready(),
    });
  }

  private reader(): RedisConnection {
    const reader = connectRedis(this.config, 'blocking');
    reader.on('error', () => undefined);
    this.readers.add(reader);
    return reader;
  }

  private release(reader: RedisConnection): void {
    this.readers.delete(reader);
    reader.disconnect();
  }

  async close(): Promise<void> {
    this.tokens?.close();
    for (const reader of this.readers) reader.disconnect();
    await this.runFinished?.close();
    // quit() needs a ready connection (there is no offline queue); a connection still connecting is dropped.
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }
}

function conversationNotFound(conversationId: string): AgentqError {
  return new AgentqError(
    'NOT_FOUND',
    `conversation ${conversationId} not found (it never had a turn, or it was cleared or expired)`,
  );
}
