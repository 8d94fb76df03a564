import { AgentqError } from '../../contracts/errors.js';
import { formatZodError } from '../../contracts/job-schema.js';
import { MODEL_STATE_SCHEMAS } from '../../contracts/model-settings.js';
import { isTerminal, type StepRecord } from '../../contracts/run-record.js';
import type { Task } from '../../graph/graph.js';
import type { RunMeta } from '../run-meta.js';

/** What a fork reads of its original, in one consistent snapshot (RunForks.source). */
export interface ForkSource {
  meta: RunMeta;
  /** The original's recording hash (`b<k>`, `w<k>.t<i>`, …), as stored. */
  record: Record<string, string>;
  steps: StepRecord[];
  /** The original's whole history (JSON per message): the earlier turns' stretches it shares, then its own. */
  messages: string[];
  /**
   * How many of `messages` are earlier turns' (the recording's boundaries count only the run's own list).
   * @default 0
   */
  messageBase?: number;
}

/** What the fork holds when it is created: the original as committed just before its step `step`. */
export interface ForkPlan {
  step: number;
  superstep: number;
  tasks: Task[];
  /** The state, JSON per key (the patch applied). */
  state: Record<string, string>;
  /** The history up to the fork point, JSON per message. */
  messages: string[];
  /** The step log before the fork point, each step marked inherited (with the run it ran in). */
  steps: StepRecord[];
  /** Writes of the fork point's parallel siblings committed before it (they are not run again), by task. */
  writes: Record<string, string>;
  /** The recording's boundaries and writes up to the fork point: a fork of the fork finds them too. */
  record: Record<string, string>;
  /** State keys the patch set. */
  patched: string[];
}

interface Boundary {
  /** The history's length at the boundary. */
  m: number;
  /** The superstep's tasks. */
  t: Task[];
  /** The state keys that changed since the previous boundary (all of them at b0). */
  s: Record<string, unknown>;
}

/** A JSON value's kind, for a patch's check against the value it replaces. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function notRecorded(runId: string, what: string): AgentqError {
  return new AgentqError('RECORDING_UNAVAILABLE', `cannot fork run ${runId}: ${what}`, { details: { runId } });
}

/**
 * The fork of `source` at its step `step` (its index in the step log, as `agentq steps` numbers it): the
 * state, history and step log the original had committed just before that step, from its recording's
 * superstep boundaries (AGENTQ_RECORDING `steps` or `full`). `patch` replaces state keys (never adds one:
 * a key the state does not have, a value of another JSON kind than the key holds, or a model setting or
 * image the run's input would not accept (MODEL_STATE_SCHEMAS), is INVALID_INPUT naming it). Only finished runs and runs waiting on an interrupt can be forked; a step past the end is
 * NOT_FOUND, as an unknown run is.
 */
export function planFork(source: ForkSource, step: number, patch: Record<string, unknown> = {}): ForkPlan {
  const { meta, record, steps } = source;
  if (!isTerminal(meta.status) && meta.status !== 'waiting')
    throw new AgentqError(
      'CONFLICT',
      `run ${meta.id} is ${meta.status}; only a finished run or one waiting on an interrupt can be forked (wait for it, or cancel it first)`,
    );
  // The step that did not commit (a failed, cancelled or waiting run's next one) can be forked from too.
  const pending = meta.status !== 'completed' && (meta.tasks?.length ?? 0) > 0;
  const last = pending ? steps.length : steps.length - 1;
  if (!Number.isInteger(step) || step < 0 || step > last)
    throw new AgentqError(
      'NOT_FOUND',
      last < 0
        ? `run ${meta.id} has no step to fork from (it committed none)`
        : `run ${meta.id} has no step ${step}; fork from one of its steps 0–${last} (agentq steps ${meta.id})`,
    );
  if (!meta.record && !record.bytes)
    throw notRecorded(
      meta.id,
      'it did not record its steps (AGENTQ_RECORDING was off when it was created, or it predates recording)',
    );
  const superstep = step < steps.length ? steps[step]!.superstep : meta.superstep;
  const state: Record<string, unknown> = {};
  let boundary: Boundary | undefined;
  const copied: Record<string, string> = {};
  for (let k = 0; k <= superstep; k += 1) {
    const json = record[`b${k}`];
    if (json === undefined)
      throw notRecorded(
        meta.id,
        record.over
          ? `its recording stopped at '${record.over}' when it reached AGENTQ_RECORDING_MAX_BYTES, before superstep ${k}; fork from an earlier step, or raise the budget for new runs`
          : `its recording has no boundary of superstep ${k}`,
      );
    copied[`b${k}`] = json;
    boundary = JSON.parse(json) as Boundary;
    Object.assign(state, boundary.s);
  }
  const tasks = boundary!.t;
  // Parallel siblings of the fork point committed before it: their writes go in, they do not run again.
  const writes: Record<string, string> = {};
  for (const sibling of steps.slice(0, step)) {
    if (sibling.superstep !== superstep) continue;
    const write = record[`w${superstep}.t${sibling.task}`];
    if (write === undefined)
      throw notRecorded(meta.id, `its recording has no write of task ${sibling.task} of superstep ${superstep}`);
    writes[String(sibling.task)] = write;
    copied[`w${superstep}.t${sibling.task}`] = write;
  }
  for (const [key, value] of Object.entries(patch)) {
    if (!(key in state))
      throw new AgentqError(
        'INVALID_INPUT',
        `set.${key}: the state of run ${meta.id} (graph ${meta.graph}) has no key '${key}'; its keys are ${Object.keys(state).sort().join(', ')}`,
        { details: [{ path: `set.${key}`, message: 'not a key of the graph state' }] },
      );
    const was = kindOf(state[key]);
    if (was !== 'null' && kindOf(value) !== was)
      throw new AgentqError(
        'INVALID_INPUT',
        `set.${key}: state key '${key}' holds ${was === 'array' || was === 'object' ? 'an' : 'a'} ${was}, the patch gives ${kindOf(value)} ${JSON.stringify(value)?.slice(0, 80)}; send a value of the same kind`,
        { details: [{ path: `set.${key}`, message: `expected ${was}, got ${kindOf(value)}` }] },
      );
    checkModelStatePatch(key, value);
    state[key] = value;
  }
  return {
    step,
    superstep,
    tasks,
    state: Object.fromEntries(Object.entries(state).map(([key, value]) => [key, JSON.stringify(value)])),
    messages: source.messages.slice(0, (source.messageBase ?? 0) + boundary!.m),
    steps: steps
      .slice(0, step)
      .map((inherited) => ({ ...inherited, inheritedFrom: inherited.inheritedFrom ?? meta.id })),
    writes,
    record: copied,
    patched: Object.keys(patch),
  };
}

/**
 * A patched model setting or image checked as the run's input would be (MODEL_STATE_SCHEMAS):
 * INVALID_INPUT naming `set.<key>…`. The API asks before its policy check, so a malformed value is
 * called malformed (400), not out of policy (403).
 */
export function checkModelStatePatch(key: string, value: unknown): void {
  const checked = MODEL_STATE_SCHEMAS[key]?.safeParse(value);
  if (checked && !checked.success)
    throw new AgentqError(
      'INVALID_INPUT',
      `the fork's patch is refused: ${formatZodError(checked.error, `set.${key}`)}`,
      {
        details: checked.error.issues.map((issue) => ({
          path: ['set', key, ...issue.path.map(String)].join('.'),
          message: issue.message,
        })),
      },
    );
}
