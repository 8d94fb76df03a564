import { createHash } from 'node:crypto';
import { AgentqError } from '../../contracts/errors.js';
import type { RedisConnection } from '../../redis/connect-redis.js';
import { runScript } from '../../redis/create-redis.js';
import { luaScript } from '../../redis/lua-script.js';
import type { Keys } from '../keys.js';
import { ServedGraphs } from '../served-graphs.js';
import { graphRolloutsKey } from './rollout-keys.js';

/** KEYS: 1 the rollouts hash · ARGV: graph, operation, current, ramp, percent, now → {'ok', json} | {refusal}. */
const CHANGE_ROLLOUT = luaScript(new URL('./lua/change-rollout-1.lua', import.meta.url));

/** How long a process reuses the rollouts it read before it reads them again. */
const DEFAULT_CACHE_MS = 1000;

/** Which version a graph's new runs get: the current one, and a share of them the ramping one. */
export interface GraphRollout {
  graph: string;
  /** The version new runs get (those outside the ramp); null: none set, a worker runs its latest. */
  current: string | null;
  /** The version a share of new runs get, and that share in percent (0: paused); null: nothing ramps. */
  ramp: { version: string; percent: number } | null;
  /** When the rollout last changed (ms since the epoch); null when none is set. */
  updatedAt: number | null;
}

/** A change to a rollout (`set`): a field left out stays as it is; `ramp: null` ends the ramp. */
export interface RolloutChange {
  current?: string;
  ramp?: string | null;
  /** The ramping version's share of new runs, a whole number from 0 (paused) to 100. */
  percent?: number;
}

interface StoredRollout {
  current?: string;
  ramp?: string;
  percent?: number;
  at?: number;
}

/**
 * The bucket, 0–99, a run id falls in for every ramp: the first four bytes of its SHA-256, modulo 100.
 * A run goes to the ramping version when its bucket is below the percentage, so the choice depends on the
 * id alone (a retried enqueue with the same id lands on the same version) and raising the percentage only
 * adds runs to the ramp, never moves one back.
 */
export function rolloutBucket(runId: string): number {
  return createHash('sha256').update(runId).digest().readUInt32BE(0) % 100;
}

/** The version a new run without one of its own gets under `rollout`; undefined: none (the worker's latest). */
export function versionUnderRollout(rollout: GraphRollout | undefined, runId: string): string | undefined {
  if (!rollout) return undefined;
  if (rollout.ramp && rolloutBucket(runId) < rollout.ramp.percent) return rollout.ramp.version;
  return rollout.current ?? undefined;
}

function parseRollout(graph: string, json: string): GraphRollout {
  const stored = JSON.parse(json) as StoredRollout;
  return {
    graph,
    current: stored.current ?? null,
    ramp: stored.ramp ? { version: stored.ramp, percent: stored.percent ?? 0 } : null,
    updatedAt: stored.at ?? null,
  };
}

const REFUSALS: Record<string, (graph: string) => string> = {
  'no-ramp': (graph) =>
    `graph ${graph} has no ramping version; start one first (PUT /v1/graphs/${graph}/rollout {"ramp": "<version>", "percent": 10})`,
  'no-current': (graph) =>
    `graph ${graph} has no current version to ramp from; set it in the same change ({"current": "<version>"}, agentq graph rollout ${graph} --current <version>)`,
  same: (graph) => `the ramping version of graph ${graph} must differ from its current version`,
};

export interface GraphRolloutsOptions {
  redis: RedisConnection;
  keys: Keys;
  /**
   * AGENTQ_GRAPH_HEARTBEAT_MS, to read which versions live workers serve (ServedGraphs): a version none
   * serves cannot be made current or ramped to. @default 5000
   */
  heartbeatMs?: number;
  /** How long `versionFor` reuses what it read. @default 1000 */
  cacheMs?: number;
}

/**
 * Per graph name, the version new runs get: a current version and an optional ramping version with a
 * percentage, kept in one Redis hash. The enqueuer asks `versionFor` when a run names no version; a run
 * that names one (or is created by a replay or fork, which carry their own) keeps it, and runs already
 * created keep the version written in their record whatever changes here.
 */
export class GraphRollouts {
  private cached: { at: number; rollouts: Map<string, GraphRollout> } | undefined;
  private readonly served: ServedGraphs;

  constructor(private readonly options: GraphRolloutsOptions) {
    const { redis, keys, heartbeatMs = 5000 } = options;
    this.served = new ServedGraphs({ redis, keys, heartbeatMs });
  }

  private get key(): string {
    return graphRolloutsKey(this.options.keys);
  }

  /** Every graph's rollout, by graph name. */
  async all(): Promise<Map<string, GraphRollout>> {
    const hash = await this.options.redis.hgetall(this.key);
    const rollouts = new Map<string, GraphRollout>();
    for (const graph of Object.keys(hash).sort()) rollouts.set(graph, parseRollout(graph, hash[graph]!));
    // The cache's age is this process's own business: its own clock.
    this.cached = { at: Date.now(), rollouts };
    return rollouts;
  }

  /** The graph's rollout; one with nothing set (today's behaviour: each worker runs its latest) when none. */
  async get(graph: string): Promise<GraphRollout> {
    const json = await this.options.redis.hget(this.key, graph);
    return json ? parseRollout(graph, json) : { graph, current: null, ramp: null, updatedAt: null };
  }

  /**
   * The version a new run of `graph` with id `runId` gets, or undefined when the graph has no rollout (the
   * worker that takes the run in runs its latest). Reads the rollouts at most once per `cacheMs`.
   */
  async versionFor(graph: string, runId: string): Promise<string | undefined> {
    const fresh = this.cached && Date.now() - this.cached.at < (this.options.cacheMs ?? DEFAULT_CACHE_MS);
    const rollouts = fresh ? this.cached!.rollouts : await this.all();
    return versionUnderRollout(rollouts.get(graph), runId);
  }

  /** Sets the current version, starts or changes the ramp (its version, its percent), or ends it (`ramp: null`). */
  async set(graph: string, change: RolloutChange): Promise<GraphRollout> {
    if (
      change.percent !== undefined &&
      !(Number.isInteger(change.percent) && change.percent >= 0 && change.percent <= 100)
    )
      throw new AgentqError('INVALID_INPUT', `percent must be a whole number from 0 to 100, got ${change.percent}`);
    if (change.current !== undefined && change.current === change.ramp)
      throw new AgentqError('INVALID_INPUT', REFUSALS.same!(graph));
    await this.requireServed(graph, [change.current, change.ramp ?? undefined]);
    // Raising the share of a ramp already set asks that its version is still served.
    if (change.ramp === undefined && change.percent)
      await this.requireServed(graph, [(await this.get(graph)).ramp?.version]);
    return this.change(graph, 'set', {
      current: change.current ?? '',
      ramp: change.ramp === null ? '-' : (change.ramp ?? ''),
      percent: change.percent === undefined ? '' : String(change.percent),
    });
  }

  /** The ramping version becomes current; nothing ramps any more. */
  async promote(graph: string): Promise<GraphRollout> {
    return this.change(graph, 'promote');
  }

  /** Pauses the ramp: its version stays named, at 0 %, so no new run gets it until its percent is set again. */
  async pause(graph: string): Promise<GraphRollout> {
    return this.change(graph, 'pause');
  }

  /** Ends the ramp (new runs all get the current version); with `current`, also moves the current version (back). */
  async rollback(graph: string, current?: string): Promise<GraphRollout> {
    await this.requireServed(graph, [current]);
    return this.change(graph, 'rollback', { current: current ?? '' });
  }

  /** Removes the graph's rollout: its new runs get no version at creation, as without one. → whether there was one. */
  async clear(graph: string): Promise<boolean> {
    const removed = await this.options.redis.hdel(this.key, graph);
    this.cached = undefined;
    return removed > 0;
  }

  private async change(
    graph: string,
    operation: 'set' | 'promote' | 'pause' | 'rollback',
    values: { current?: string; ramp?: string; percent?: string } = {},
  ): Promise<GraphRollout> {
    const reply = await runScript<string[]>(
      this.options.redis,
      CHANGE_ROLLOUT,
      [this.key],
      [graph, operation, values.current ?? '', values.ramp ?? '', values.percent ?? '', Date.now()],
    );
    this.cached = undefined;
    const [outcome, json] = reply;
    if (outcome !== 'ok' || json === undefined) {
      const refusal = REFUSALS[outcome ?? ''];
      throw new AgentqError('CONFLICT', refusal ? refusal(graph) : `rollout of ${graph}: ${String(outcome)}`, {
        details: { graph, reason: outcome },
      });
    }
    return parseRollout(graph, json);
  }

  /** Throws ROLLOUT_VERSION_UNSERVED, naming the versions that are served, for a version no live worker serves. */
  private async requireServed(graph: string, versions: (string | undefined)[]): Promise<void> {
    const wanted = versions.filter((version): version is string => version !== undefined);
    if (wanted.length === 0) return;
    const { ids } = await this.served.live();
    for (const version of wanted) {
      if (ids.includes(`${graph}@${version}`)) continue;
      const served = ids.filter((id) => id.startsWith(`${graph}@`)).map((id) => id.slice(graph.length + 1));
      throw new AgentqError(
        'ROLLOUT_VERSION_UNSERVED',
        `no live worker serves graph ${graph}@${version}, so new runs cannot be sent to it; served versions of ${graph}: ${served.join(', ') || 'none'}. Start workers that register it first`,
        { details: { graph, graphVersion: version, served } },
      );
    }
  }
}
