import { randomBytes } from 'node:crypto';
import type { RedisConnection } from '../../shared/adapters/redis/connect-redis.js';
import { sleep } from '../../shared/contracts/abort.js';
import type { Keys } from '../../shared/store/keys.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import { runScript } from '../../shared/adapters/redis/create-redis.js';
import { CLAIM_PAID_WORK, RELEASE_PAID_CLAIM, SAVE_PAID_WORK } from './paid-claim-scripts.js';

/** A call this process claimed: the claim's field in the memo hash and who holds it. */
export interface HeldClaim {
  field: string;
  claimant: string;
}

export type ClaimOutcome = { kind: 'memo'; value: unknown } | ({ kind: 'claimed' } & HeldClaim) | { kind: 'stale' };

export interface PaidClaimsOptions {
  redis: RedisConnection;
  keys: Keys;
  /** This process's id (liveness-thread.ts): a claim names it, and lapses when its liveness key does. */
  processId: string;
  logger: Logger;
  /** How often a duplicate checks a claim it waits for. @default 200 */
  pollMs?: number;
}

/**
 * Paid work at most once at any load (issue 20, invariant I4 under load): NodeContext.memo claims a call
 * before paying for it. A second delivery of the same step — its job's lock ran out while the first was
 * stalled, not dead — finds the claim and waits for the saved result instead of calling again; it takes
 * over only when the claimant's process stops beating or the claim runs out (the node's timeout).
 * Waiting is part of the attempt: it spends no attempt and no backoff.
 */
export class PaidClaims {
  private readonly pollMs: number;

  constructor(private readonly options: PaidClaimsOptions) {
    this.pollMs = options.pollMs ?? 200;
  }

  async acquire(input: {
    runId: string;
    superstep: number;
    task: number;
    key: string;
    attempt: number;
    endsAt: number;
    signal: AbortSignal;
  }): Promise<ClaimOutcome> {
    const { redis, keys, processId, logger } = this.options;
    const { runId, superstep, task, key, attempt, endsAt, signal } = input;
    const stepId = `s${superstep}.t${task}`;
    const claimant = `${processId}/${randomBytes(4).toString('hex')}`;
    const runKeys = keys.run(runId);
    const alivePrefix = keys.alivePrefix(keys.shardOf(runId));
    let waited = false;
    for (;;) {
      const reply = await runScript<string[]>(
        redis,
        CLAIM_PAID_WORK,
        [runKeys.memo, runKeys.meta, runKeys.writes],
        [stepId, key, claimant, attempt, endsAt, Date.now(), alivePrefix, superstep, task],
      );
      if (reply[0] === 'stale') {
        logger.info(
          { runId, stepId, key },
          'paid work: the step was committed by another delivery; this one stops before paying',
        );
        return { kind: 'stale' };
      }
      if (reply[0] === 'memo') {
        if (waited)
          logger.info({ runId, stepId, key }, 'paid work: the claimant saved its result; using it (no second call)');
        return { kind: 'memo', value: JSON.parse(reply[1]!) };
      }
      if (reply[0] === 'claimed') {
        if (waited)
          logger.warn({ runId, stepId, key }, 'paid work: the claimant is gone or ran out of time; calling again');
        return { kind: 'claimed', field: `claim:${stepId}:${key}`, claimant };
      }
      if (!waited)
        logger.info(
          { runId, stepId, key, owner: reply[1] },
          'paid work: another delivery of this step is paying for it; waiting for its result',
        );
      waited = true;
      await sleep(this.pollMs, signal);
    }
  }

  /** Saves the step's results and ends the claim, in one script. */
  async save(runId: string, stepId: string, memos: Record<string, unknown>, claim: HeldClaim): Promise<void> {
    await runScript(
      this.options.redis,
      SAVE_PAID_WORK,
      [this.options.keys.run(runId).memo],
      [stepId, JSON.stringify(memos), claim.field, claim.claimant],
    );
  }

  /** Ends a claim whose call failed, so a retry need not wait for it to run out. */
  async release(runId: string, claim: HeldClaim): Promise<void> {
    await runScript(
      this.options.redis,
      RELEASE_PAID_CLAIM,
      [this.options.keys.run(runId).memo],
      [claim.field, claim.claimant],
    );
  }
}
