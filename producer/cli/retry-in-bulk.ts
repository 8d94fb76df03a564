import { parseSince } from '../../shared/contracts/parse-since.js';
import type { ProducerClients } from './command-helpers.js';
import { UsageError } from './usage-error.js';

interface Io {
  out(text: string): void;
  err(text: string): void;
  setExitCode(code: number): void;
}

/** `--since` (or `--until`) as a time (ms): a duration back from now or an ISO time; a usage error otherwise. */
export function sinceOf(text: string, option = '--since'): number {
  try {
    return parseSince(text, Date.now(), option.replace(/^--/, ''));
  } catch (error) {
    throw new UsageError(`${option}: ${(error as Error).message}`);
  }
}

/** The options a bulk command shares with the others: what it matches and how fast and far it goes. */
export interface BulkOptions {
  error?: string;
  since?: string;
  until?: string;
  graph?: string;
  tenant?: string;
  rate?: number;
  limit?: number;
}

/** A bulk command's filter and limits from its options (`--since`/`--until` read as times). */
export function bulkRequestOf(options: BulkOptions) {
  return {
    filter: {
      ...(options.error ? { errorCode: options.error } : {}),
      ...(options.since === undefined ? {} : { since: sinceOf(options.since) }),
      ...(options.until === undefined ? {} : { until: sinceOf(options.until, '--until') }),
      ...(options.graph ? { graph: options.graph } : {}),
      ...(options.tenant ? { tenant: options.tenant } : {}),
    },
    limits: {
      ...(options.rate ? { ratePerSecond: options.rate } : {}),
      ...(options.limit ? { limit: options.limit } : {}),
    },
  };
}

export interface BulkRetryOptions {
  status?: string;
  error?: string;
  since?: string;
  graph?: string;
  tenant?: string;
  dryRun?: boolean;
  rate?: number;
  limit?: number;
  json?: boolean;
}

/** `agentq retry --status failed …`: the matching failed runs counted first, then retried at `--rate`, then a summary. */
export async function retryInBulk(clients: ProducerClients, options: BulkRetryOptions, io: Io): Promise<void> {
  if (options.status !== 'failed')
    throw new UsageError(
      `retry in bulk takes --status failed (only failed runs can be retried)${options.status ? `, got '${options.status}'` : ''}; or give one run id`,
    );
  const { filter, limits } = bulkRequestOf(options);
  const client = await clients.client();
  try {
    const counted = await client.retryFailed(filter, { ...limits, dryRun: true });
    io.err(
      `${counted.matched} failed run${counted.matched === 1 ? '' : 's'} match${options.dryRun ? ' (dry run: nothing retried)' : `; retrying at up to ${options.rate ?? 5}/s…`}`,
    );
    const summary = options.dryRun ? counted : await client.retryFailed(filter, limits);
    if (summary.errors.length > 0) io.setExitCode(1);
    if (options.json) {
      io.out(JSON.stringify(summary));
      return;
    }
    if (options.dryRun) {
      io.out(summary.runs.join('\n'));
      return;
    }
    io.out(
      [
        ...summary.retried.map((id) => `${id} retried`),
        ...summary.skipped.map(({ runId, reason }) => `${runId} skipped: ${reason}`),
        ...summary.errors.map(({ runId, code, message }) => `${runId} not retried: ${code}: ${message}`),
        `${summary.matched} matched: ${summary.retried.length} retried, ${summary.skipped.length} skipped, ${summary.errors.length} errors`,
      ].join('\n'),
    );
  } finally {
    await client.close();
  }
}
