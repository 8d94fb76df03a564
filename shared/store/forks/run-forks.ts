import { AgentqError } from '../../contracts/errors.js';
import type { StepRecord } from '../../contracts/run-record.js';
import { parseMeta, type RunMeta } from '../run-meta.js';
import type { RunStoreContext } from '../run-store-context.js';
import { slotPipeline } from '../slot-pipeline.js';
import { FORK_RUN } from './fork-run-script.js';
import { HISTORY_OF_FIELD, parseSegments, SharedHistory } from '../shared-history.js';
import type { ForkPlan, ForkSource } from './plan-fork.js';

/** The fork's own settings: who it is, and what differs from its original. */
interface NewFork {
  id: string;
  /** @default the original's */
  graphVersion?: string;
  /** BullMQ priority its admission gave it. */
  priority: number;
  now: number;
}

/**
 * Forks in the run store: reading an original in one snapshot, and creating the fork that
 * planFork describes. The caller admits the fork (TenantAdmission) and hands it to the workers.
 */
export class RunForks {
  constructor(private readonly context: RunStoreContext) {}

  /** The original as one consistent snapshot (its keys share one slot: one MULTI), or null when it is gone. */
  async source(runId: string): Promise<ForkSource | null> {
    const keys = this.context.keys.run(runId);
    const replies = await this.context.redis
      .multi()
      .hgetall(keys.meta)
      .hgetall(keys.record)
      .lrange(keys.steps, 0, -1)
      .lrange(keys.messages, 0, -1)
      .exec();
    const [meta, record, steps, messages] = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [Record<string, string>, Record<string, string>, string[], string[]];
    if (!meta?.id) return null;
    // A conversation turn stores only its own messages: the fork copies the earlier turns' stretches too.
    const segments = parseSegments(meta[HISTORY_OF_FIELD]);
    const messageBase = segments.reduce((sum, [, count]) => sum + count, 0);
    const shared =
      messageBase > 0 ? await new SharedHistory(this.context).range(runId, segments, 0, messageBase - 1) : [];
    return {
      meta: parseMeta(meta),
      record,
      steps: steps.map((step) => JSON.parse(step) as StepRecord),
      messages: [...shared, ...messages],
      messageBase,
    };
  }

  /** Creates the fork `plan` describes of `original`; → its meta. */
  async create(original: RunMeta, plan: ForkPlan, fork: NewFork): Promise<RunMeta> {
    const { recording, keys } = this.context;
    const forkOf = { runId: original.id, step: plan.step, ...(plan.patched.length ? { patched: plan.patched } : {}) };
    const fields: Record<string, string | number> = {
      id: fork.id,
      tenant: original.tenant,
      status: 'queued',
      graph: original.graph,
      superstep: plan.superstep,
      tasks: JSON.stringify(plan.tasks),
      stepCount: plan.step,
      input: JSON.stringify(original.input ?? null),
      maxSteps: original.maxSteps,
      forkOf: JSON.stringify(forkOf),
      createdAt: fork.now,
      updatedAt: fork.now,
    };
    const graphVersion = fork.graphVersion ?? original.graphVersion;
    if (graphVersion) fields.graphVersion = graphVersion;
    // A deadline is a span from the run's creation: the fork gets the same span from its own.
    if (original.deadlineAt) fields.deadlineAt = fork.now + (original.deadlineAt - original.createdAt);
    if (original.tokenBudget) fields.tokenBudget = original.tokenBudget;
    if (fork.priority) fields.priority = fork.priority;
    // The fork's own shard's ledger (the original's may be another shard's): its copy is charged there.
    fields.ledger = keys.runLedger(original.tenant, fork.id);
    const records = recording.mode === 'off' ? {} : plan.record;
    if (recording.mode !== 'off') {
      fields.record = recording.mode;
      fields.recordMax = recording.maxBytes;
    }
    const bytes = Object.entries(records).reduce((sum, [field, value]) => sum + field.length + value.length, 0);
    const recordPairs = Object.entries(records).flat();
    if (recordPairs.length > 0) recordPairs.push('bytes', String(bytes));
    const section = (values: string[]) => [values.length, ...values];
    const args = [
      this.context.eventsMaxLen,
      JSON.stringify(forkOf),
      ...section(Object.entries(fields).flatMap(([field, value]) => [field, String(value)])),
      ...section(Object.entries(plan.state).flat()),
      ...section(plan.messages),
      ...section(plan.steps.map((step) => JSON.stringify(step))),
      ...section(Object.entries(plan.writes).flat()),
      ...section(recordPairs),
    ];
    // As RunCreation.create: one round trip, the active index first, the tenant's list in the same one.
    // Forks are rare: the script goes as text (EVAL), with no script cache to miss after a Redis restart.
    const runKeys = keys.runAll(fork.id);
    const replies = await slotPipeline(this.context.redis)
      .zadd(keys.activeRuns(), 'NX', fork.now, fork.id)
      .eval(FORK_RUN, runKeys.length, ...runKeys, ...args)
      .zadd(keys.tenantRuns(original.tenant), 'NX', fork.now, fork.id)
      .sadd(keys.tenants(), original.tenant)
      .exec();
    const [error, created] = replies?.[1] ?? [null, null];
    if (error) throw error;
    if (created !== 1) throw new AgentqError('CONFLICT', `run id ${fork.id} is taken; fork again`);
    return parseMeta(Object.fromEntries(Object.entries(fields).map(([field, value]) => [field, String(value)])));
  }
}
