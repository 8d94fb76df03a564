import type { ErrorRecord } from '../contracts/errors.js';
import type { ChildRunLink, RunStatus } from '../contracts/run-record.js';
import type { RedisConnection } from '../redis/connect-redis.js';
import { runScript } from '../redis/create-redis.js';
import { luaScript } from '../redis/lua-script.js';
import type { Keys } from './keys.js';
import { slotPipeline } from './slot-pipeline.js';

/**
 * KEYS: 1 the parent's memo hash · ARGV: 1 step id, 2 'link' | 'rearm', 3.. (id, link JSON, wait) triples or ids
 * → how many awaited children of the step have not ended yet.
 */
const LINK_CHILDREN = luaScript(new URL('./lua/link-children-1.lua', import.meta.url));
/** KEYS: 1 the parent's memo hash · ARGV: 1 child id → {step, left} once per end, else false. */
const SETTLE_CHILD = luaScript(new URL('./lua/settle-child-1.lua', import.meta.url));

/** A child run as its parent links it before creating it. */
export interface NewChildLink {
  runId: string;
  graph: string;
  wait: boolean;
}

/** What a parent reads of a child: enough to return its output or throw its error. */
export interface ChildState {
  status: RunStatus;
  output: unknown;
  error: ErrorRecord | null;
}

/** A page of a parent's children (HSCAN order: stable while the list does not change). */
export interface ChildPage {
  children: ChildRunLink[];
  /** Pass back for the next page; null when this page is the last. */
  nextCursor: string | null;
  total: number;
}

/** Fields a child link keeps in the parent's memo hash (compact: a parent may have thousands). */
interface StoredLink {
  g: string;
  s: string;
  w: 0 | 1;
  at: number;
}

/**
 * Parent ↔ child links of child runs (NodeContext.runGraph). The child's meta names its parent
 * (`parentRunId`, `parentStep`, `parentWaits`); the parent keeps its side in its own memo hash
 * (docs/reference/redis-layout.md), which expires and is purged with the run: `child:<id>` per child,
 * and for the children a step waits on, `child-wait:<id>` until the child's end is counted and
 * `child-waits:<step>` how many are left. The step is woken when that count reaches 0, once.
 */
export class ChildLinks {
  constructor(
    private readonly redis: RedisConnection,
    private readonly keys: Keys,
  ) {}

  /** Links children to the parent's step before they exist; → the step's awaited children not ended yet. */
  async link(parentRunId: string, stepId: string, children: readonly NewChildLink[], now: number): Promise<number> {
    const args = children.flatMap(({ runId, graph, wait }) => {
      const link: StoredLink = { g: graph, s: stepId, w: wait ? 1 : 0, at: now };
      return [runId, JSON.stringify(link), wait ? '1' : '0'];
    });
    return runScript<number>(this.redis, LINK_CHILDREN, [this.memoOf(parentRunId)], [stepId, 'link', ...args]);
  }

  /** Waits again on children whose end was counted but which run again (retried); → as `link`. */
  async rearm(parentRunId: string, stepId: string, childIds: readonly string[]): Promise<number> {
    return runScript<number>(this.redis, LINK_CHILDREN, [this.memoOf(parentRunId)], [stepId, 'rearm', ...childIds]);
  }

  /** Counts an awaited child's end; → its step and how many are left, or null when counted already. */
  async settle(parentRunId: string, childId: string): Promise<{ step: string; left: number } | null> {
    const reply = await runScript<[string, number] | null>(
      this.redis,
      SETTLE_CHILD,
      [this.memoOf(parentRunId)],
      [childId],
    );
    return reply ? { step: reply[0], left: Number(reply[1]) } : null;
  }

  /** How many awaited children of a step have not ended (as counted). */
  async waiting(parentRunId: string, stepId: string): Promise<number> {
    return Number((await this.redis.hget(this.memoOf(parentRunId), `child-waits:${stepId}`)) ?? 0);
  }

  /** The children some step of the parent still waits on (their ends not counted yet). */
  async awaited(parentRunId: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor = '0';
    do {
      const [next, pairs] = await this.redis.hscan(
        this.memoOf(parentRunId),
        cursor,
        'MATCH',
        'child-wait:*',
        'COUNT',
        500,
      );
      for (let i = 0; i < pairs.length; i += 2) ids.push(pairs[i]!.slice('child-wait:'.length));
      cursor = next;
    } while (cursor !== '0');
    return ids;
  }

  /** One page of the parent's children, `limit` or so at a time (HSCAN: a page may hold a few more or fewer). */
  async list(
    parentRunId: string,
    { cursor = '0', limit = 100 }: { cursor?: string; limit?: number } = {},
  ): Promise<ChildPage> {
    const memo = this.memoOf(parentRunId);
    const children: ChildRunLink[] = [];
    let next = cursor;
    // HSCAN may answer an empty page before the end: read on until something or the end.
    do {
      const [after, pairs] = await this.redis.hscan(memo, next, 'MATCH', 'child:*', 'COUNT', limit);
      for (let i = 0; i < pairs.length; i += 2) {
        const link = JSON.parse(pairs[i + 1]!) as StoredLink;
        children.push({
          runId: pairs[i]!.slice('child:'.length),
          graph: link.g,
          step: link.s,
          wait: link.w === 1,
          createdAt: new Date(link.at).toISOString(),
        });
      }
      next = after;
    } while (next !== '0' && children.length === 0);
    const total = Number((await this.redis.hget(memo, 'children')) ?? 0);
    return { children, nextCursor: next === '0' ? null : next, total };
  }

  /** The state of each child (null: not created yet), one round trip per Cluster slot. */
  async states(childIds: readonly string[]): Promise<(ChildState | null)[]> {
    if (childIds.length === 0) return [];
    const pipeline = slotPipeline(this.redis);
    for (const id of childIds) pipeline.hmget(this.keys.run(id).meta, 'status', 'output', 'error');
    const replies = (await pipeline.exec()) ?? [];
    return childIds.map((id, index) => {
      const [error, fields] = replies[index] ?? [new Error(`no reply for child ${id}`), null];
      if (error) throw error;
      const [status, output, failure] = fields as (string | null)[];
      if (!status) return null;
      return {
        status: status as RunStatus,
        output: output ? (JSON.parse(output) as unknown) : null,
        error: failure ? (JSON.parse(failure) as ErrorRecord) : null,
      };
    });
  }

  private memoOf(runId: string): string {
    return this.keys.run(runId).memo;
  }
}
