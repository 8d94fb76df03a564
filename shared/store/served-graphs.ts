import type { RedisConnection } from '../redis/connect-redis.js';
import { AgentqError } from '../contracts/errors.js';
import type { Keys } from './keys.js';
import { redisTimeMs } from '../redis/redis-time.js';

/** How many heartbeats an entry may miss before it counts as gone. */
const MISSED_HEARTBEATS = 3;
/** A producer re-reads the served set at most this often while the graph it asks for is in it. */
const CACHE_MS = 1000;

interface ServedGraphsOptions {
  redis: RedisConnection;
  keys: Keys;
  /** Workers announce every `heartbeatMs`; an entry older than 3× that is ignored (and swept). */
  heartbeatMs: number;
}

/**
 * Which graphs the live workers serve: a ZSET of `<graph id> <worker id>` members scored by the last
 * heartbeat. Workers announce themselves (`announce`), producers refuse a graph nobody serves
 * (`requireServed`), and a worker that lacks a run's graph asks whether another one has it before it
 * lets the run wait or fails it.
 */
export class ServedGraphs {
  private cached: { at: number; ids: string[]; workers: number } | undefined;

  constructor(private readonly options: ServedGraphsOptions) {}

  /**
   * Records that `workerId` serves `graphIds` (`name@version`) now, and sweeps expired entries. Now is
   * Redis's time unless given: a worker whose clock runs ahead must neither sweep the others' entries nor
   * look alive after its death, nor one behind look dead.
   */
  async announce(workerId: string, graphIds: string[], at?: number): Promise<void> {
    const { redis, keys } = this.options;
    const now = at ?? (await redisTimeMs(redis));
    const key = keys.servedGraphs();
    const members = graphIds.flatMap((id) => [now, `${id} ${workerId}`]);
    await redis
      .multi()
      .zadd(key, ...members)
      .zremrangebyscore(key, '-inf', this.expiredBefore(now))
      .exec();
  }

  /** Removes `workerId`'s entries (a clean shutdown). */
  async withdraw(workerId: string, graphIds: string[]): Promise<void> {
    if (graphIds.length === 0) return;
    await this.options.redis.zrem(this.options.keys.servedGraphs(), ...graphIds.map((id) => `${id} ${workerId}`));
  }

  /** The graph ids (`name@version`) some live worker serves, sorted, and how many workers are live. */
  async live(at?: number): Promise<{ ids: string[]; workers: number }> {
    const now = at ?? (await redisTimeMs(this.options.redis));
    const members = await this.options.redis.zrangebyscore(
      this.options.keys.servedGraphs(),
      this.expiredBefore(now) + 1,
      '+inf',
    );
    const ids = new Set<string>();
    const workers = new Set<string>();
    for (const member of members) {
      const space = member.lastIndexOf(' ');
      ids.add(member.slice(0, space));
      workers.add(member.slice(space + 1));
    }
    // The cache's age is this process's own business: its own clock.
    this.cached = { at: Date.now(), ids: [...ids].sort(), workers: workers.size };
    return this.cached;
  }

  /** True when a live worker serves `name` (at `version`, when given). */
  async serves(name: string, version?: string, now?: number): Promise<boolean> {
    return servesIn((await this.live(now)).ids, name, version);
  }

  /**
   * Throws UNKNOWN_GRAPH, naming the graphs that are served, when live workers exist and none serves
   * `name` (`@version`). With no live worker at all the run is accepted: a queue buffers while workers
   * (re)start, and the run waits for them.
   */
  async requireServed(name: string, version?: string): Promise<void> {
    if (this.cached && Date.now() - this.cached.at < CACHE_MS && servesIn(this.cached.ids, name, version)) return;
    const { ids, workers } = await this.live();
    if (workers === 0 || servesIn(ids, name, version)) return;
    const wanted = version === undefined ? `'${name}'` : `'${name}@${version}'`;
    throw new AgentqError(
      'UNKNOWN_GRAPH',
      `no live worker serves graph ${wanted}; served: ${ids.join(', ')}. Start a worker that registers it (startWorker({ graphs: [...] })), fix the name, or queue it anyway (client: enqueue(request, { queueUnserved: true }); HTTP: ?queueUnserved=true) to wait up to AGENTQ_UNSERVED_GRAPH_WAIT_MS for such a worker`,
      { details: { graph: name, ...(version === undefined ? {} : { graphVersion: version }), served: ids } },
    );
  }

  private expiredBefore(now: number): number {
    return now - MISSED_HEARTBEATS * this.options.heartbeatMs;
  }
}

/** True when `ids` (`name@version`) hold `name` (at `version`, when given). */
export function servesIn(ids: string[], name: string, version?: string): boolean {
  return version === undefined ? ids.some((id) => id.startsWith(`${name}@`)) : ids.includes(`${name}@${version}`);
}
