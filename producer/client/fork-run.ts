import { AgentqError } from '../../shared/contracts/errors.js';
import { newRunId } from '../../shared/contracts/ids.js';
import { MAX_INPUT_DEPTH, nestsWithin } from '../../shared/contracts/job-schema.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import type { ServedGraphs } from '../../shared/store/served-graphs.js';
import type { TenantAdmission } from '../../shared/operations/runs/tenant-admission.js';
import { planFork } from '../../shared/store/forks/plan-fork.js';
import { toRunRecord, type RedisRunStore } from '../../shared/store/redis-run-store.js';

export interface ForkOptions {
  /** The step to fork from: its index in the original's step log (`agentq steps`). */
  from: number;
  /** State keys to replace in the fork (each must be a key of the graph's state, with a value of its kind; `settings` and `queryImages` are checked as the input was). */
  set?: Record<string, unknown>;
  /** Run the fork on this graph version. @default the original's */
  graphVersion?: string;
  /** Queue it even when live workers exist and none serves that version. @default false */
  queueUnserved?: boolean;
}

interface ForkDeps {
  store: RedisRunStore;
  admission: TenantAdmission;
  served: ServedGraphs;
  /** Hands the created fork to the workers (an id-only intake job: they add its step jobs). */
  handOver(runId: string): Promise<void>;
}

/**
 * Forks a finished or waiting run from one of its steps: a new run whose state, history and
 * step log are the original's as committed just before that step; the steps before it are inherited (not
 * run again) and the original is not touched. The fork passes the same admission as a new run.
 */
export async function forkRun(deps: ForkDeps, runId: string, options: ForkOptions): Promise<RunRecord> {
  const { store, admission, served } = deps;
  if (options.set !== undefined && !nestsWithin(options.set, MAX_INPUT_DEPTH))
    throw new AgentqError(
      'INVALID_INPUT',
      `the fork's state patch nests more than ${MAX_INPUT_DEPTH} arrays/objects deep; send a flatter value`,
    );
  const source = await store.forks.source(runId);
  if (!source)
    throw new AgentqError(
      'NOT_FOUND',
      `run ${runId} not found (it may never have existed, or it expired or was purged)`,
    );
  const plan = planFork(source, options.from, options.set);
  const { meta } = source;
  if (options.graphVersion !== undefined && !options.queueUnserved)
    await served.requireServed(meta.graph, options.graphVersion);
  const id = newRunId();
  const now = Date.now();
  // What the fork copies, all of it: admission refuses a fork that would not fit, and its script charges it.
  const pairsBytes = (pairs: Record<string, string>) =>
    Object.entries(pairs).reduce((sum, [key, value]) => sum + key.length + value.length, 0);
  const bytes =
    JSON.stringify(meta.input ?? null).length +
    pairsBytes(plan.state) +
    pairsBytes(plan.writes) +
    pairsBytes(plan.record) +
    plan.messages.reduce((sum, message) => sum + message.length, 0) +
    plan.steps.reduce((sum, step) => sum + JSON.stringify(step).length, 0);
  const admitted = await admission.admit({
    tenant: meta.tenant,
    runId: id,
    origin: 'producer',
    priority: meta.priority,
    bytes,
    now,
  });
  let fork;
  try {
    fork = await store.forks.create(meta, plan, {
      id,
      ...(options.graphVersion === undefined ? {} : { graphVersion: options.graphVersion }),
      priority: admitted.priority,
      now,
    });
  } catch (error) {
    await admitted.undo();
    throw error;
  }
  await deps.handOver(id);
  return toRunRecord(fork);
}
