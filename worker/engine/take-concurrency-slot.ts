import type { Concurrency } from '../../shared/contracts/job-schema.js';
import { isTerminal } from '../../shared/contracts/run-record.js';
import type { ConcurrencyKeys } from '../../shared/store/slots/concurrency-keys.js';
import type { RedisRunStore, RunMeta } from '../../shared/store/redis-run-store.js';
import type { Logger } from '../../shared/telemetry/logger.js';

/**
 * A holder that ended this recently has its run-finished hook still to run, which gives its slot on and
 * sends the new holder to the intake: left to it, or the slot would go to a run no one sends.
 */
const HOOK_GRACE_MS = 10_000;

/** What a run with a concurrency key does now: run, or wait behind `behind` (it is handed on when a slot frees). */
type SlotVerdict = { kind: 'go' } | { kind: 'wait'; behind: string[] };

interface TakeConcurrencySlotOptions {
  store: RedisRunStore;
  keys: ConcurrencyKeys;
  logger: Logger;
  now?: number;
}

/**
 * At most `limit` runs of a concurrency key taken in at once, as a run is taken in: the run joins its
 * key's line (one script, ConcurrencyKeys) and starts when it holds a slot; else it waits — no job, no
 * worker held — until a holder finishes and the run-finished hook hands it the slot through the intake.
 * A holder that ended a while ago, expired or belongs to another tenant (its hook lost in a crash) leaves
 * here, so a lost hand-on delays a key only until a run of it is looked at again (the reconciler hands
 * waiting runs back to the intake now and then).
 */
export async function takeConcurrencySlot(
  meta: RunMeta,
  concurrency: Concurrency,
  { store, keys, logger, now = Date.now() }: TakeConcurrencySlotOptions,
): Promise<SlotVerdict> {
  const run = { tenant: meta.tenant, runId: meta.id, createdAt: meta.createdAt, concurrency };
  let behind: string[] = [];
  for (let pass = 0; pass < 3; pass += 1) {
    const turn = await keys.wait(run);
    if (turn.holds) return { kind: 'go' };
    behind = [];
    for (const runId of turn.ahead) {
      const other = await store.reads.get(runId);
      const ended = other && isTerminal(other.status) && now - (other.finishedAt ?? other.updatedAt) > HOOK_GRACE_MS;
      if (other && other.tenant === meta.tenant && !ended) behind.push(runId);
      else await keys.leave(meta.tenant, concurrency, runId);
    }
    if (behind.length === turn.ahead.length) break;
  }
  // Said once per wait (updatedAt moves, so the reconciler's sweep looks again only after
  // AGENTQ_RECONCILE_AFTER_MS); only while the run exists: a late delivery must not make an expired run's meta again.
  const noted = await store.commits.noteOnMeta(meta.id, 'concurrencyBehind', behind.join(','), now);
  if (noted !== 1) return { kind: 'wait', behind };
  await store.eventLog.addEvent(meta.id, 'step-deferred', {
    reason: `concurrency key ${concurrency.key} has ${concurrency.limit} of ${concurrency.limit} runs in flight: this run starts when one of them ends`,
    concurrencyKey: concurrency.key,
    behind,
  });
  logger.debug({ runId: meta.id, concurrencyKey: concurrency.key, behind }, 'run waits for its concurrency key');
  return { kind: 'wait', behind };
}
