import type { RunRecord } from '../../shared/contracts/run-record.js';
import type { AgentClient } from '../client/agent-client.js';
import type { RunReader } from '../client/run-reader.js';
import type { RunRecordSource } from '../client/run-record-reader.js';
import { UsageError } from './usage-error.js';

/** Exit codes: 0 ok; 1 the run failed or was cancelled (or the command failed); 2 usage error. */
export const EXIT = { ok: 0, runFailed: 1, usage: 2 } as const;

export interface Io {
  /** Results only. */
  out(text: string): void;
  /** Progress and diagnostics. */
  err(text: string): void;
  setExitCode(code: number): void;
}

/**
 * Where commands get their client: `record` for `status` (one record, read without ioredis where it
 * can be), `reader` for the other commands that only read (and purge), so they start without BullMQ;
 * `client` for those that add jobs (run, cancel, retry, resume).
 */
export interface ProducerClients {
  client: () => Promise<AgentClient>;
  reader: () => Promise<RunReader>;
  record: () => Promise<RunRecordSource>;
}

/** The exit code a run's record gives the command that showed it. */
export function exitFor(record: RunRecord): number {
  return record.status === 'failed' || record.status === 'cancelled' ? EXIT.runFailed : EXIT.ok;
}

/** A run record as the commands print it: a summary line, then its output or error. */
export function describeRun(record: RunRecord): string {
  const lines = [
    `${record.id}  ${record.status}  ${record.graph}@${record.graphVersion ?? '?'}  steps=${record.stepCount}`,
  ];
  // A child run names the run whose step started it (`agentq children <parent>` lists the other side).
  if (record.parentRunId)
    lines.push(`parent: ${record.parentRunId}${record.parentStep ? ` (step ${record.parentStep})` : ''}`);
  if (record.output !== null && record.output !== undefined) lines.push(`output: ${JSON.stringify(record.output)}`);
  if (record.error) lines.push(`error: ${record.error.code}: ${record.error.message}`);
  // Only a run that read from the provider's prompt cache: the others' records print as they always did.
  const { inputTokens, outputTokens, costUsd, cachedInputTokens, uncachedCostUsd } = record.usage;
  if (cachedInputTokens)
    lines.push(
      `usage: ${inputTokens} input (${cachedInputTokens} cached) + ${outputTokens} output tokens; cost $${costUsd.toFixed(6)} ($${(uncachedCostUsd ?? costUsd).toFixed(6)} uncached)`,
    );
  return lines.join('\n');
}

/** A JSON option's value, or a usage error naming the option. */
export function parseJson(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${flag} is not valid JSON (${(error as Error).message}); quote it, e.g. ${flag} '{"steps": 3}'`,
    );
  }
}

/** A commander parser of a positive integer option, refusing anything else as a usage error naming it. */
export function parseCount(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1)
      throw new UsageError(`${name} must be a positive integer, got '${value}'`);
    return number;
  };
}

/** Runs `action` with a client made by `factory`, and closes it whatever happens. */
export async function withClient<C extends { close(): Promise<void> }, T>(
  factory: () => Promise<C>,
  action: (client: C) => Promise<T>,
): Promise<T> {
  const client = await factory();
  try {
    return await action(client);
  } finally {
    await client.close();
  }
}
