import { redisNodes } from '../redis/redis-connection.js';
import type { RunStoreContext } from './run-store-context.js';
import { slotPipeline } from './slot-pipeline.js';

/** Where a repair stands in the keyspace: the node it is scanning (by index) and its SCAN cursor there. */
export interface ReindexPosition {
  node: number;
  cursor: string;
}

export interface ReindexPassOptions {
  /** Only runs of this tenant. @default every tenant */
  tenant?: string;
  /** About how many keys one pass looks at (SCAN's COUNT). @default 1000 */
  count?: number;
}

export interface ReindexPass {
  /** Where the next pass starts; null when the whole keyspace has been scanned. */
  next: ReindexPosition | null;
  /** Runs found in this pass (of `tenant` when given). */
  runs: number;
  /** Of them, runs their tenant's list did not hold: added back. */
  added: number;
}

/**
 * Rebuilds the tenants' run lists from the runs that exist: a run whose meta is in Redis is put back in
 * its tenant's list (at its creation time) if it is missing there, and its tenant in the tenant set.
 * It walks the keyspace with SCAN, a bounded pass at a time — on a Redis Cluster each master in turn,
 * since SCAN is per node — so it can run beside live traffic. It only adds entries: removing is left to
 * the readers and the reconciler, which drop an entry only when a read that succeeded found no run.
 */
export class RunIndexRepair {
  constructor(private readonly context: RunStoreContext) {}

  /** One pass from `from` (the start when omitted). */
  async pass(
    from: ReindexPosition | null = null,
    { tenant, count = 1000 }: ReindexPassOptions = {},
  ): Promise<ReindexPass> {
    const { redis, keys } = this.context;
    const nodes = await redisNodes(redis);
    const position = from ?? { node: 0, cursor: '0' };
    const node = nodes[position.node];
    if (!node) return { next: null, runs: 0, added: 0 };
    // Every shard's tag, as `{s*}`: a run's keys are `<prefix>:{<shard tag>}:run:<id>:<part>`.
    const match = `${escapeGlob(keys.prefix)}:{s*}:run:*:meta`;
    const [cursor, found] = await node.scan(position.cursor, 'MATCH', match, 'COUNT', count, 'TYPE', 'hash');
    const next = nextPosition(position, cursor, nodes.length);
    // A key the pattern matches by chance (a prefix that itself holds `:{s`) is not taken for a run's.
    const runIds = found.flatMap((key) => {
      const id = /:run:([^:]+):meta$/.exec(key)?.[1];
      return id !== undefined && keys.run(id).meta === key ? [id] : [];
    });
    if (runIds.length === 0) return { next, runs: 0, added: 0 };
    const reads = slotPipeline(redis);
    for (const id of runIds) reads.hmget(keys.run(id).meta, 'id', 'tenant', 'createdAt');
    const writes = slotPipeline(redis);
    let runs = 0;
    for (const [error, value] of (await reads.exec()) ?? []) {
      if (error) throw error;
      const [id, owner, createdAt] = value as (string | null)[];
      // Gone since the scan saw it (expired or purged): nothing to list.
      if (!id || !owner || (tenant !== undefined && owner !== tenant)) continue;
      runs += 1;
      writes.zadd(keys.tenantRuns(owner), 'NX', Number(createdAt ?? 0), id).sadd(keys.tenants(), owner);
    }
    if (runs === 0) return { next, runs, added: 0 };
    let added = 0;
    // Replies alternate: a ZADD's (1: the entry was missing) then a SADD's.
    for (const [index, [error, value]] of ((await writes.exec()) ?? []).entries()) {
      if (error) throw error;
      if (index % 2 === 0) added += Number(value);
    }
    return { next, runs, added };
  }
}

function nextPosition(position: ReindexPosition, cursor: string, nodes: number): ReindexPosition | null {
  if (cursor !== '0') return { node: position.node, cursor };
  return position.node + 1 < nodes ? { node: position.node + 1, cursor: '0' } : null;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}
