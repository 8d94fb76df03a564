import { MAX_PRIORITY } from '../contracts/max-priority.js';
import { shardTag } from '../contracts/shards.js';
import { weightedFairness, weightOf, type TenantWeights } from '../config/tenant-weights.js';
import { bullmqLua } from '../bullmq/bullmq-lua.js';
import type { RedisConnection } from '../redis/connect-redis.js';
import { runScript } from '../redis/create-redis.js';
import { luaScript } from '../redis/lua-script.js';
import type { Keys } from './keys.js';

/**
 * Priority units a weight-1 tenant's pass moves per step job (a weight-w tenant's: FAIR_STRIDE / w); a
 * run's own priority counts in whole strides. Small, so that the virtual time climbs slowly through
 * BullMQ's range (at most MAX_PRIORITY), and divisible by the small weights.
 */
export const FAIR_STRIDE = 60;

/** The virtual time past which the fair queue moves everything down (about half of BullMQ's range). */
export const FAIR_REBASE_AT = 2 ** 20;

/** What the fair queue's Lua (lua/fair-pass.lua) must agree with. */
export const FAIR_LUA_VALUES = { FAIR_STRIDE, FAIR_REBASE_AT, MAX_PRIORITY } as const;

const FAIR_PRIORITIES = luaScript(new URL('./lua/fair-priorities-1.lua', import.meta.url), {
  ...FAIR_LUA_VALUES,
  BULLMQ: bullmqLua(['priorities']),
});

/** What a script that adds a tenant's step jobs needs to decide their priorities: the shard's fair hash and the weight. */
export interface FairArgs {
  key: string;
  tenant: string;
  weight: number;
}

/** A script's three fair arguments (hash key, tenant, weight): the key '' when fairness is off. */
export function fairArgs(args: FairArgs | undefined): (string | number)[] {
  return args ? [args.key, args.tenant, args.weight] : ['', '', 0];
}

/** The fair queue's state in one shard: the virtual time and each tenant's pass. */
export interface FairState {
  virtual: number;
  passes: Record<string, number>;
}

/** One decision: `count` jobs of `tenant`, and what its shard queue holds as they are added. */
export interface FairRequest {
  tenant: string;
  weight: number;
  /** The run's own priority (0 none). */
  own: number;
  count: number;
  /** Whether any job waits in the queue (wait list or prioritized set). */
  queued: boolean;
  /** The most urgent waiting prioritized job's priority, if any. */
  head?: number;
}

/**
 * The decision lua/fair-pass.lua makes, as a pure function (the script is the one that runs; the tests
 * hold the two to the same answers). → the jobs' priorities, the state after, and how far everything
 * was moved down (`rebased`: waiting jobs' priorities too).
 */
export function fairPriorities(
  state: FairState,
  request: FairRequest,
): { priorities: number[]; state: FairState; rebased: number } {
  const { tenant, weight, own, count, queued, head } = request;
  if (own === 0 && !queued) return { priorities: new Array<number>(count).fill(0), state, rebased: 0 };
  let virtual = Math.max(state.virtual, head === undefined ? 0 : head - 1);
  let passes = { ...state.passes };
  let pass = passes[tenant] ?? 0;
  let rebased = 0;
  if (virtual >= FAIR_REBASE_AT) {
    rebased = Math.floor(virtual);
    virtual -= rebased;
    pass -= rebased;
    passes = Object.fromEntries(
      Object.entries(passes)
        .map(([name, value]) => [name, value - rebased] as const)
        .filter(([, value]) => value > virtual),
    );
  }
  let start = Math.max(pass, virtual);
  const priorities: number[] = [];
  for (let i = 0; i < count; i += 1) {
    priorities.push(Math.min(MAX_PRIORITY, 1 + Math.floor(start) + own * FAIR_STRIDE));
    start += FAIR_STRIDE / weight;
  }
  return { priorities, state: { virtual, passes: { ...passes, [tenant]: start } }, rebased };
}

/**
 * Weighted fairness between tenants (AGENTQ_TENANT_WEIGHTS) from TypeScript: the fair hash of each
 * shard (its step queue's hash tag, so a script adding jobs to that queue decides in the same call) and
 * what those scripts are given. Off (no weights) it gives nothing and the runs' own priorities stand.
 */
export class FairQueue {
  constructor(
    private readonly keys: Keys,
    private readonly weights: TenantWeights | undefined,
  ) {}

  get on(): boolean {
    return weightedFairness(this.weights);
  }

  /** Hash: the virtual time `v` and each tenant's pass `t:<tenant>` in shard `shard`. */
  key(shard: number): string {
    return `${this.keys.prefix}:${shardTag(shard, this.keys.shards)}:fair`;
  }

  /** The arguments of a script adding `tenant`'s jobs for run `runId`, or undefined when fairness is off. */
  argsFor(tenant: string, runId: string): FairArgs | undefined {
    if (!weightedFairness(this.weights)) return undefined;
    return { key: this.key(this.keys.shardOf(runId)), tenant, weight: weightOf(this.weights, tenant) };
  }

  /**
   * Decides the priorities of `count` step jobs of a run about to be added to its shard queue
   * (`queuePrefix`) from TypeScript; → their priorities (0 none), or the run's own when fairness is off.
   */
  async priorities(
    redis: RedisConnection,
    run: { runId: string; tenant?: string; priority: number },
    queuePrefix: string,
    count: number,
  ): Promise<number[]> {
    if (!this.on) return new Array<number>(count).fill(run.priority);
    // A caller that knows only the run's id (a raw job's intake): its tenant from its meta.
    const tenant = run.tenant ?? (await redis.hget(this.keys.runMeta(run.runId), 'tenant')) ?? '';
    const args = this.argsFor(tenant, run.runId)!;
    const reply = await runScript<number[]>(
      redis,
      FAIR_PRIORITIES,
      [args.key],
      [queuePrefix, args.tenant, args.weight, run.priority, count],
    );
    return reply.map(Number);
  }
}
