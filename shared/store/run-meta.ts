/** The run's meta hash as the run store parses it, and the other parsers of stored run data. */
import type { ErrorRecord } from '../contracts/errors.js';
import type { Concurrency, OnBusy } from '../contracts/job-schema.js';
import { AgentqError } from '../contracts/errors.js';
import type { Task } from '../graph/graph.js';
import {
  isTerminal,
  type PendingInterrupt,
  type RunEvent,
  type RunEventType,
  type RunRecord,
  type RunStatus,
  type Usage,
} from '../contracts/run-record.js';

/** A run as stored in its meta hash, parsed. */
export interface RunMeta {
  id: string;
  tenant: string;
  status: RunStatus;
  graph: string;
  graphVersion: string | null;
  superstep: number;
  /** Tasks of the current superstep; null until the intake admitted the run. */
  tasks: Task[] | null;
  stepCount: number;
  input: unknown;
  maxSteps: number;
  deadlineAt: number | null;
  /** Input + output tokens the run may spend; null = no budget. */
  tokenBudget: number | null;
  usage: Usage;
  output: unknown;
  error: ErrorRecord | null;
  idempotencyKey: string | null;
  /** Where the finished run is POSTed (webhooks). */
  webhookUrl: string | null;
  /** The batch this run answers an item of. */
  batchId: string | null;
  /** The schedule whose tick started this run. */
  scheduleId: string | null;
  /**
   * A child run's parent and its step (`context.runGraph`), whether that step waits for it, and the
   * step's span (`<traceId>-<spanId>`) when it was traced.
   */
  parent: { runId: string; step: string; wait: boolean; span?: string } | null;
  /** The conversation this run continues, if any. */
  conversationId: string | null;
  /** What the run does while its conversation's previous turn is unfinished; null: its graph's default. */
  onBusy: OnBusy | null;
  /** The concurrency key the run is held to and its limit (its request's, or its graph's derived at intake). */
  concurrency: Concurrency | null;
  /** The turn this one interrupted (onBusy 'interrupt'): it continues from that run's history, though cancelled. */
  continuesFrom: string | null;
  /** How many messages of its history a conversation's earlier turns gave it (0 for a first turn or a lone run). */
  seededMessages: number;
  /** What the run waits for (status `waiting`). */
  interrupt: PendingInterrupt | null;
  /** BullMQ priority of the run's step jobs: 0 none (the wait list, taken first), else 1 most urgent. */
  priority: number;
  /** `<traceId>-<rootSpanId>` of the run's trace, when tracing was on as it was taken in. */
  trace: string | null;
  /** The answer to the last interrupt, for the step that asked. */
  resume: { stepId: string; value: unknown } | null;
  /** What the run records for time travel (AGENTQ_RECORDING when it was created); null: nothing. */
  record: 'full' | 'steps' | null;
  /** A replay's original run and whether it goes on with live calls after a divergence. */
  replay: ReplayOf | null;
  /** The run and step a fork started from. */
  forkOf: ForkOf | null;
  /** A replay's first divergence, when it went on with live calls after it (`--continue-live`). */
  divergence: unknown;
  /** The earlier attempts of a run retried in bulk: how many, and the error of the last. */
  retryOf: RetryOf | null;
  /** When the run finished (ms); null while it has not. */
  finishedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

/** A replay run's link to the run it replays. */
export interface ReplayOf {
  runId: string;
  /** Go on with live calls after the first divergence instead of failing with REPLAY_DIVERGED. */
  live: boolean;
}

/** A forked run's link to its original. */
interface ForkOf {
  runId: string;
  /** The original's step index the fork started from (steps before it are inherited). */
  step: number;
  /** State keys the fork's patch set. */
  patched?: string[];
}

/** A retried run's link to its earlier attempt(s). */
interface RetryOf {
  /** Attempts before this one (1 after the first retry). */
  attempts: number;
  /** The error the last attempt failed with. */
  error: ErrorRecord | null;
  /** When the last attempt failed (ms). */
  failedAt: number | null;
}

/**
 * The meta fields a step reads — what the step processor and NodeContext use. BEGIN returns only these
 * (status, superstep and tasks first: the script decides on them), not the whole hash with the run's
 * input: measured, a smaller reply is a worth-while share of a step's cost at 100 runs in flight.
 */
export const STEP_META_FIELDS = [
  'status',
  'superstep',
  'tasks',
  'id',
  'tenant',
  'graph',
  'graphVersion',
  'stepCount',
  'maxSteps',
  'deadlineAt',
  'tokenBudget',
  'inputTokens',
  'outputTokens',
  'costUsd',
  'trace',
  'resume',
  'priority',
  'record',
  'replay',
  'conversationId',
] as const;

/** A run as a step sees it (BEGIN's reply). */
export type StepMeta = Pick<
  RunMeta,
  | 'id'
  | 'tenant'
  | 'status'
  | 'graph'
  | 'graphVersion'
  | 'superstep'
  | 'tasks'
  | 'stepCount'
  | 'maxSteps'
  | 'deadlineAt'
  | 'tokenBudget'
  | 'usage'
  | 'trace'
  | 'resume'
  | 'priority'
  | 'record'
  | 'replay'
  | 'conversationId'
>;

/** BEGIN's HMGET of STEP_META_FIELDS, in that order (false or null for absent fields), parsed. */
export function parseStepMeta(values: readonly (string | false | null)[]): StepMeta {
  const fields: Record<string, string> = {};
  STEP_META_FIELDS.forEach((field, index) => {
    const value = values[index];
    if (typeof value === 'string') fields[field] = value;
  });
  return parseMeta(fields);
}

export function pairsToObject(pairs: string[]): Record<string, string> {
  const result: Record<string, string> = {};
  for (let i = 0; i < pairs.length; i += 2) result[pairs[i]!] = pairs[i + 1]!;
  return result;
}

function parseJson(value: string | undefined): unknown {
  return value === undefined ? null : JSON.parse(value);
}

export function parseMeta(fields: Record<string, string>): RunMeta {
  return {
    id: fields.id!,
    tenant: fields.tenant!,
    status: fields.status as RunStatus,
    graph: fields.graph!,
    graphVersion: fields.graphVersion ?? null,
    superstep: Number(fields.superstep ?? 0),
    tasks: fields.tasks ? (JSON.parse(fields.tasks) as Task[]) : null,
    stepCount: Number(fields.stepCount ?? 0),
    input: parseJson(fields.input),
    maxSteps: Number(fields.maxSteps),
    deadlineAt: fields.deadlineAt ? Number(fields.deadlineAt) : null,
    tokenBudget: fields.tokenBudget ? Number(fields.tokenBudget) : null,
    usage: {
      inputTokens: Number(fields.inputTokens ?? 0),
      outputTokens: Number(fields.outputTokens ?? 0),
      costUsd: Number(fields.costUsd ?? 0),
      // Only when a step recorded them, so a run that used no cache and no priced call reads as before.
      ...(fields.cachedInputTokens ? { cachedInputTokens: Number(fields.cachedInputTokens) } : {}),
      ...(fields.uncachedCostUsd ? { uncachedCostUsd: Number(fields.uncachedCostUsd) } : {}),
    },
    output: parseJson(fields.output),
    error: parseJson(fields.error) as ErrorRecord | null,
    idempotencyKey: fields.idempotencyKey ?? null,
    webhookUrl: fields.webhookUrl ?? null,
    batchId: fields.batchId ?? null,
    scheduleId: fields.scheduleId ?? null,
    parent: fields.parentRunId
      ? {
          runId: fields.parentRunId,
          step: fields.parentStep ?? '',
          wait: fields.parentWaits === '1',
          ...(fields.parentSpan ? { span: fields.parentSpan } : {}),
        }
      : null,
    conversationId: fields.conversationId ?? null,
    onBusy: (fields.onBusy as OnBusy | undefined) ?? null,
    concurrency: parseJson(fields.concurrency) as Concurrency | null,
    continuesFrom: fields.continuesFrom ?? null,
    seededMessages: Number(fields.seededMessages ?? 0),
    interrupt: parseJson(fields.interrupt) as PendingInterrupt | null,
    resume: parseJson(fields.resume) as RunMeta['resume'],
    trace: fields.trace ?? null,
    priority: Number(fields.priority ?? 0),
    record: fields.record === 'full' || fields.record === 'steps' ? fields.record : null,
    replay: parseJson(fields.replay) as ReplayOf | null,
    forkOf: parseJson(fields.forkOf) as ForkOf | null,
    divergence: parseJson(fields.divergence),
    retryOf: parseJson(fields.retryOf) as RetryOf | null,
    finishedAt: fields.finishedAt ? Number(fields.finishedAt) : null,
    createdAt: Number(fields.createdAt),
    updatedAt: Number(fields.updatedAt),
  };
}

export function parseState(fields: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, JSON.parse(value)]));
}

export function parseEvent(id: string, fields: string[]): RunEvent {
  const object = pairsToObject(fields);
  return { id, type: object.type as RunEventType, data: JSON.parse(object.data ?? '{}') as Record<string, unknown> };
}

/** The run record of a meta hash as HGETALL returns it; null for an empty hash (no such run). */
export function runRecordOf(fields: Record<string, string>): RunRecord | null {
  return fields.id ? toRunRecord(parseMeta(fields)) : null;
}

export function toRunRecord(meta: RunMeta): RunRecord {
  return {
    id: meta.id,
    tenant: meta.tenant,
    status: meta.status,
    graph: meta.graph,
    graphVersion: meta.graphVersion,
    stepCount: meta.stepCount,
    output: meta.output,
    error: meta.error,
    interrupt: meta.status === 'waiting' ? meta.interrupt : null,
    usage: meta.usage,
    ...(meta.scheduleId ? { scheduleId: meta.scheduleId } : {}),
    ...(meta.concurrency ? { concurrency: meta.concurrency } : {}),
    ...(meta.parent ? { parentRunId: meta.parent.runId, parentStep: meta.parent.step } : {}),
    ...(meta.forkOf ? { forkOf: meta.forkOf } : {}),
    ...(meta.replay ? { replayOf: meta.replay } : {}),
    ...(meta.retryOf ? { retryOf: meta.retryOf } : {}),
    ...cachedMarkOf(meta.output),
    ...(meta.finishedAt && isTerminal(meta.status) ? { finishedAt: new Date(meta.finishedAt).toISOString() } : {}),
    createdAt: new Date(meta.createdAt).toISOString(),
    updatedAt: new Date(meta.updatedAt).toISOString(),
  };
}

/**
 * The `cached` mark of a run answered from the answer cache: its graph put it in the output (`cached: {from, at}`,
 * RagOutput), the only place a node's result reaches the run's meta; any other output marks nothing.
 */
export function cachedMarkOf(output: unknown): { cached?: { from: string; at: string } } {
  const cached = (output as { cached?: { from?: unknown; at?: unknown } } | null)?.cached;
  return cached && typeof cached.from === 'string' && typeof cached.at === 'string'
    ? { cached: { from: cached.from, at: cached.at } }
    : {};
}

export function encodeCursor(score: string, id: string): string {
  return Buffer.from(`${score}|${id}`).toString('base64url');
}

export function decodeCursor(cursor: string): [string, string] {
  const [score, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (!score || !id || Number.isNaN(Number(score)))
    throw new AgentqError('INVALID_INPUT', `cursor '${cursor}' is not one this API returned`);
  return [score, id];
}
