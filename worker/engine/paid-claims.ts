import { isCluster, type RedisConnection } from '../../shared/redis/connect-redis.js';
import { sleep } from '../../shared/contracts/abort.js';
import type { Keys } from '../../shared/store/keys.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import { runScript } from '../../shared/redis/create-redis.js';
import {
  CLAIM_PAID_WORK,
  CONFIRM_PAID_CLAIM,
  RELEASE_PAID_CLAIM,
  SAVE_AND_RECORD_PAID_WORK,
  SAVE_PAID_WORK,
} from './paid-claim-scripts.js';
import type { RecordVerdict } from '../../shared/store/recordings/run-recordings.js';
import { StepAbort } from '../../shared/contracts/abort.js';
import { redisFaultOf, retryWhileRedisFaulty } from '../../shared/redis/redis-fault.js';
import type { WarningGate } from '../../shared/telemetry/warning-gate.js';

const LATE_SAVE = 'paid work: the run ended before this late save; its result is dropped, no key of the run is written';

/** A call this process claimed: the claim's field in the memo hash and who holds it. */
interface HeldClaim {
  field: string;
  claimant: string;
  /** When the claim runs out (ms): a result whose save failed is re-saved until then. */
  endsAt?: number;
  /** When the script that took the claim was sent (ms): its look is the last one while it is recent (`confirm`). */
  lookedAt?: number;
  /** Whether someone followed the run's live tokens at that look (the claim's script checks it too). */
  followed?: boolean;
}

/** A paid result Redis has not taken yet (it was full): kept here, used by this process's next attempt. */
interface UnsavedResult {
  value: unknown;
}

type ClaimOutcome = { kind: 'memo'; value: unknown } | ({ kind: 'claimed' } & HeldClaim) | { kind: 'stale' };

interface PaidClaimsOptions {
  redis: RedisConnection;
  keys: Keys;
  /** This process's id (liveness-thread.ts): a claim names it, and lapses when its liveness key does. */
  processId: string;
  logger: Logger;
  /** How often a duplicate checks a claim it waits for. @default 200 */
  pollMs?: number;
  /** How long after its owner's liveness lapsed a claim is taken over (AGENTQ_PAID_CLAIM_TAKEOVER_MS). @default 0 */
  takeoverMs?: number;
  /** A round trip of `confirm` longer than this means the process was paused: it looks again. @default 3000 */
  pauseMs?: number;
  /** Repeated warnings (a refused save per call while Redis is full) as one line per interval. */
  warnings?: WarningGate;
  /**
   * Another way to Redis for a paid result whose save failed (the liveness thread's connection): while
   * this process's own connections are silent, its peers take its steps over and would pay again.
   */
  rescue?: (lua: string, keys: string[], args: (string | number)[]) => Promise<void>;
}

/**
 * Paid work at most once at any load (docs/concepts/at-most-once.md, under load): NodeContext.memo claims a call
 * before paying for it. A second delivery of the same step — its job's lock ran out while the first was
 * stalled, not dead — finds the claim and waits for the saved result instead of calling again; it takes
 * over only when the claimant's process stops beating or the claim runs out (the node's timeout).
 * Waiting is part of the attempt: it spends no attempt and no backoff.
 */
export class PaidClaims {
  private readonly pollMs: number;
  /** Claimants of this process whose call is in flight: any other claimant of this process is over. */
  private readonly inFlight = new Set<string>();
  /** Results paid for whose save Redis refused, by `<run id>/<claim field>`, until a re-save lands. */
  private readonly unsaved = new Map<string, UnsavedResult>();
  /** Claims this process made so far: numbers its claimants (the process id makes them unique across processes). */
  private claimsMade = 0;

  constructor(private readonly options: PaidClaimsOptions) {
    this.pollMs = options.pollMs ?? 200;
  }

  /** Results held in memory because Redis refused their save (tests, the shutdown's last line). */
  get unsavedCount(): number {
    return this.unsaved.size;
  }

  async acquire(input: {
    runId: string;
    superstep: number;
    task: number;
    key: string;
    attempt: number;
    endsAt: number;
    signal: AbortSignal;
    /** Whether the step is its superstep's only task: then no parallel task's stored write is looked for. */
    onlyTask?: boolean;
  }): Promise<ClaimOutcome> {
    const { redis, keys, processId, logger } = this.options;
    const { runId, superstep, task, key, attempt, endsAt, signal, onlyTask = false } = input;
    const stepId = `s${superstep}.t${task}`;
    const claimant = `${processId}/${(this.claimsMade += 1).toString(36)}`;
    const runKeys = keys.run(runId);
    const alivePrefix = keys.alivePrefix(keys.shardOf(runId));
    const field = `claim:${stepId}:${key}`;
    // Paid for by an earlier attempt here whose save Redis refused: use it, do not buy it again.
    const unsaved = this.unsaved.get(`${runId}/${field}`);
    if (unsaved) {
      logger.info(
        { runId, stepId, key },
        'paid work: using the result an earlier attempt paid for (its save is pending)',
      );
      return { kind: 'memo', value: unsaved.value };
    }
    let waited = false;
    let over = '';
    for (;;) {
      const lookedAt = Date.now();
      const reply = await runScript<string[]>(
        redis,
        CLAIM_PAID_WORK,
        [runKeys.memo, runKeys.meta, runKeys.writes, keys.tokenLog(runId)],
        [
          stepId,
          key,
          claimant,
          attempt,
          Math.max(0, endsAt - lookedAt),
          alivePrefix,
          superstep,
          task,
          over,
          this.options.takeoverMs ?? 0,
          keys.tokenChannel(runId),
          isCluster(redis) ? '1' : '0',
          onlyTask ? '1' : '0',
        ],
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
        this.inFlight.add(claimant);
        return { kind: 'claimed', field, claimant, endsAt, lookedAt, followed: reply[1] === '1' };
      }
      // A claim of this very process whose call is no longer in flight (an earlier delivery here that
      // ended without releasing it): over, so take it at once instead of waiting for it to run out.
      const owner = reply[1] ?? '';
      if (owner.startsWith(`${processId}/`) && !this.inFlight.has(owner) && over !== owner) {
        over = owner;
        continue;
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

  /**
   * Saves the step's results and ends the claim, in one script. When Redis refuses the save (full, or
   * gone), the result `value` of `key` is kept here — this process's next attempt uses it — and saved
   * again in the background until Redis takes it (then the claim ends and other deliveries find the
   * memo), for as long as the claim holds; the error is thrown on, so the step is retried.
   */
  async save(
    runId: string,
    stepId: string,
    memos: Record<string, unknown>,
    claim: HeldClaim,
    key?: string,
    record?: (string | number)[],
  ): Promise<RecordVerdict | undefined> {
    const scriptArgs: (string | number)[] = [stepId, JSON.stringify(memos), claim.field, claim.claimant];
    const { redis, keys } = this.options;
    // `record`: the call's recording (recordCallArgs) goes in the same script, after the save.
    if (record) for (const arg of record) scriptArgs.push(arg);
    const runKeys = record ? undefined : keys.run(runId);
    const [lua, scriptKeys] = runKeys
      ? [SAVE_PAID_WORK, [runKeys.memo, runKeys.meta]]
      : [SAVE_AND_RECORD_PAID_WORK, keys.runAll(runId)];
    let rescued = false;
    const write = () =>
      rescued
        ? Promise.resolve(undefined)
        : runScript<RecordVerdict | 1 | 'ended'>(redis, lua, scriptKeys, scriptArgs).then((reply) =>
            record || reply === 'ended' ? (reply as RecordVerdict | 'ended') : undefined,
          );
    let verdict: RecordVerdict | 'ended' | undefined;
    try {
      verdict = await write();
      this.inFlight.delete(claim.claimant);
    } catch (error) {
      if (key === undefined || !redisFaultOf(error)) {
        this.inFlight.delete(claim.claimant);
        throw error;
      }
      const id = `${runId}/${claim.field}`;
      this.unsaved.set(id, { value: memos[key] });
      // Still this process's call (in flight) until saved: the claim must not look over to a later attempt.
      const { logger } = this.options;
      const fields = { runId, stepId, key, err: (error as Error).message };
      const message =
        'paid work: Redis refused to save a paid result; it is kept in memory and saved as soon as Redis accepts writes';
      if (this.options.warnings) this.options.warnings.warn('paid result kept', fields, message);
      else logger.warn(fields, message);
      let ended = false;
      this.options
        .rescue?.(lua, scriptKeys, scriptArgs)
        .then(() => {
          // The script itself refuses a save after the run's end, so nothing comes back without its expiry.
          rescued = true;
          logger.info({ runId, stepId, key }, 'paid work: the kept result is saved through the liveness connection');
        })
        .catch(() => undefined);
      const rewrite = () => write().then((reply) => (ended ||= reply === 'ended'));
      void retryWhileRedisFaulty(rewrite, {
        untilMs: Math.max(1000, (claim.endsAt ?? Date.now() + 600_000) - Date.now()),
        onGiveUp: (failure) =>
          logger.error(
            { runId, stepId, key, err: String(failure) },
            'paid work: a paid result could not be saved before its claim ran out; the call may be paid again',
          ),
      }).then((saved) => {
        this.unsaved.delete(id);
        this.inFlight.delete(claim.claimant);
        if (saved && ended) logger.debug({ runId, stepId, key }, LATE_SAVE);
        else if (saved && !rescued) logger.info({ runId, stepId, key }, 'paid work: the kept result is saved now');
      });
      throw error;
    }
    if (verdict === 'ended') this.refusedLate(runId, stepId, key);
    return verdict;
  }

  /**
   * The run ended (finished elsewhere, or expired) before this save: the script wrote nothing, so no key
   * of the run comes back without its expiry. Not the user's error — a paused or cut-off worker was late —
   * so it is said once per interval, and the step stops here (a stale delivery, nothing more paid).
   */
  private refusedLate(runId: string, stepId: string, key: string | undefined): never {
    const fields = { runId, stepId, key };
    if (this.options.warnings) this.options.warnings.warn('late save refused', fields, LATE_SAVE);
    else this.options.logger.debug(fields, LATE_SAVE);
    throw new StepAbort('stale', `run ${runId} ended before step ${stepId} saved its paid result`);
  }

  /** Ends a claim whose call failed, so a retry need not wait for it to run out. */
  async release(runId: string, claim: HeldClaim): Promise<void> {
    this.inFlight.delete(claim.claimant);
    await runScript(
      this.options.redis,
      RELEASE_PAID_CLAIM,
      [this.options.keys.run(runId).memo],
      [claim.field, claim.claimant],
    );
  }

  /**
   * The last look before paying: the claim is still this call's and the run's cursor still
   * at its step, else a stale-step abort (nothing paid, no attempt spent). A look whose round trip took
   * longer than a lease (the process was paused meanwhile) is made again.
   *
   * The claim's own script made the same checks (cursor, writes, the claim now this call's): sent less
   * than a lease ago, it is as recent a look as this one would be, and the round trip is saved (one per
   * model call; a pause between the claim and here, as a paused worker shows, makes it older than a lease).
   */
  async confirm(runId: string, superstep: number, task: number, claim: HeldClaim): Promise<void> {
    const runKeys = this.options.keys.run(runId);
    const pauseMs = this.options.pauseMs ?? 3000;
    if (claim.lookedAt !== undefined && Date.now() - claim.lookedAt < pauseMs) return;
    for (let look = 0; look < 3; look += 1) {
      const startedAt = Date.now();
      const verdict = await runScript<string>(
        this.options.redis,
        CONFIRM_PAID_CLAIM,
        [runKeys.memo, runKeys.meta, runKeys.writes],
        [claim.field, claim.claimant, superstep, task],
      );
      if (verdict !== 'ok') {
        this.inFlight.delete(claim.claimant);
        this.options.logger.info(
          { runId, superstep, task, verdict },
          "paid work: checked right before paying, the step moved on or its claim is another's; not paying",
        );
        throw new StepAbort(
          'stale',
          `step s${superstep}.t${task} of run ${runId} ${verdict === 'stale' ? 'was committed or ended elsewhere' : 'is being paid for by another delivery'}`,
        );
      }
      if (Date.now() - startedAt < pauseMs) return;
    }
  }
}
