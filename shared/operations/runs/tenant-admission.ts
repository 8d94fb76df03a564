import type { RedisConnection } from '../../redis/connect-redis.js';
import type { Config } from '../../config/config.js';
import { AgentqError } from '../../contracts/errors.js';
import type { Keys } from '../../store/keys.js';
import { FairShare } from '../limits/fair-share.js';
import { weightedFairness } from '../../config/tenant-weights.js';
import { RateLimiter } from '../limits/rate-limiter.js';
import { StorageBudget } from '../limits/storage-budget.js';
import { TenantInflight } from '../limits/tenant-inflight.js';

/** Every way a run comes to exist. */
export type RunOrigin = 'producer' | 'raw-job' | 'schedule' | 'batch' | 'retry' | 'child';

interface AdmissionPolicy {
  /** Charge the run to its API key's per-minute budget (when it has a key). */
  rate: boolean;
  /** Count the run in its tenant's load and raise its priority past the tenant's fair share. */
  fairShare: boolean;
  /** Take a slot of the tenant's in-flight cap. @default true */
  inflight?: boolean;
}

/**
 * What each origin is held to, beyond what all of them are: the tenant's in-flight cap and its storage
 * budget. Kept in one table so the exceptions are visible and each says why.
 */
const POLICY: Record<RunOrigin, AdmissionPolicy> = {
  // The HTTP API's request was charged to its key already (the v1 rate-limit hook); the client library,
  // the CLI and raw jobs are trusted producers without an API key: nothing to charge.
  producer: { rate: false, fairShare: true },
  'raw-job': { rate: false, fairShare: true },
  // A tick asks with no request of its own: charged to the key that created the schedule.
  schedule: { rate: true, fairShare: true },
  // A batch's questions are paced by its concurrency and carry the batch's own priority; its submit
  // request was charged.
  batch: { rate: false, fairShare: false },
  // A retried run keeps the priority it was created with; the request that asked was charged.
  retry: { rate: false, fairShare: false },
  // A child run (context.runGraph) runs under its parent's slot: a tenant whose cap is full of parents
  // waiting for children must still run those children, or it would never free a slot (a deadlock).
  // Its storage is held to the budget as any run's; its parent's own admission bounds how many start.
  child: { rate: false, fairShare: false, inflight: false },
};

interface AdmissionRequest {
  tenant: string;
  runId: string;
  origin: RunOrigin;
  /** The API key (its hash id) the run is charged to: a schedule's creator. */
  keyId?: string;
  /** The run's own BullMQ priority (0 = none). */
  priority?: number;
  /** Bytes the run stores as it is created (its input as JSON, a fork's copy); 0 for a retry, which exists. */
  bytes: number;
  now?: number;
}

interface Admission {
  /** The BullMQ priority the run's step jobs get (its own, raised past the tenant's fair share). */
  priority: number;
  /** Gives back what this admission took (rate, slot, load, bytes): the run was not created after all, or existed. */
  undo(): Promise<void>;
}

export type TenantAdmissionConfig = Pick<
  Config,
  | 'rateLimitPerMinute'
  | 'tenantMaxInflight'
  | 'tenantFairShare'
  | 'tenantWeights'
  | 'tenantMaxBytes'
  | 'retentionSeconds'
>;

/**
 * The one admission every run passes before it exists, whoever creates it — the HTTP API, the client
 * library and the CLI (RunEnqueuer), raw jobs (IntakeProcessor), schedule ticks and batch questions
 * (RunEnqueuer, from the workers), and retries (AgentClient.retry): the tenant's in-flight cap
 * (AGENTQ_TENANT_MAX_INFLIGHT), its storage budget (AGENTQ_TENANT_MAX_BYTES), the per-key rate limit
 * (AGENTQ_RATE_LIMIT_PER_MINUTE) and fair share (AGENTQ_TENANT_FAIR_SHARE), as POLICY says per origin.
 * A refusal is an AgentqError (RATE_LIMITED or STORAGE_BUDGET_EXCEEDED) that says which limit and what
 * to do; nothing it took is kept.
 */
export class TenantAdmission {
  private readonly rate: RateLimiter;
  private readonly inflight: TenantInflight;
  private readonly storage: StorageBudget;
  private readonly fairShare: FairShare;

  constructor(redis: RedisConnection, keys: Keys, config: Partial<TenantAdmissionConfig>) {
    this.rate = new RateLimiter(redis, keys, config.rateLimitPerMinute ?? 0);
    this.inflight = new TenantInflight(redis, keys, config.tenantMaxInflight ?? 0);
    this.storage = new StorageBudget(redis, keys, {
      defaultMaxBytes: config.tenantMaxBytes ?? 0,
      retentionSeconds: config.retentionSeconds ?? 7 * 24 * 3600,
    });
    // Weighted fairness (AGENTQ_TENANT_WEIGHTS) decides every step job's priority as it is added: it
    // replaces the raise fixed at creation, and the runs keep their own priorities here.
    this.fairShare = new FairShare(
      redis,
      keys,
      weightedFairness(config.tenantWeights) ? 0 : (config.tenantFairShare ?? 0),
    );
  }

  async admit({
    tenant,
    runId,
    origin,
    keyId,
    priority = 0,
    bytes,
    now = Date.now(),
  }: AdmissionRequest): Promise<Admission> {
    const policy = POLICY[origin];
    const taken: (() => Promise<void>)[] = [];
    const undo = async () => {
      await Promise.all(taken.splice(0).map((give) => give().catch(() => undefined)));
    };
    try {
      if (policy.rate && keyId !== undefined) {
        const decision = await this.rate.consume(keyId, now);
        // A run refused here or further on costs its key nothing: a schedule whose ticks are refused
        // (the tenant at its cap, say) must not use up the budget its creator's own requests need.
        taken.push(() => this.rate.giveBack(keyId, decision.window));
        if (!decision.allowed)
          throw new AgentqError(
            'RATE_LIMITED',
            `API key ${keyId} started more than ${decision.limit} runs and requests this minute (AGENTQ_RATE_LIMIT_PER_MINUTE); the ${origin} run ${runId} was not started, retry after ${decision.resetSeconds} s`,
            { retryable: true, retryAfterMs: decision.resetSeconds * 1000 },
          );
      }
      // The in-flight slot and the storage check at once (one round trip's wait, not two): the check
      // is only a check (the run's own scripts charge every byte it stores as they store it), and a slot
      // taken for a run the check refuses is given back below with the rest.
      const [slot, stored] = await Promise.allSettled([
        policy.inflight === false ? ('exempt' as const) : this.inflight.take(tenant, runId),
        this.storage.admit(tenant, runId, bytes, now),
      ]);
      if (slot.status === 'fulfilled' && slot.value === 'new') taken.push(() => this.inflight.release(tenant, runId));
      if (slot.status === 'rejected') throw slot.reason;
      if (slot.value === 'full')
        throw new AgentqError(
          'RATE_LIMITED',
          `tenant ${tenant} has ${this.inflight.max} runs in flight, its limit (AGENTQ_TENANT_MAX_INFLIGHT); wait for some to finish`,
          { retryable: true, retryAfterMs: 2000 },
        );
      if (stored.status === 'rejected') throw stored.reason;
      let admitted = priority;
      if (policy.fairShare) {
        admitted = await this.fairShare.admit(tenant, runId, priority, now);
        taken.push(() => this.fairShare.release(tenant, runId));
      }
      return { priority: admitted, undo };
    } catch (error) {
      await undo();
      throw error;
    }
  }
}
