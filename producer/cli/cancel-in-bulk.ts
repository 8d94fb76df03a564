import { CANCELLABLE_STATUSES, type CancellableStatus } from '../client/cancel-runs.js';
import type { Io, ProducerClients } from './command-helpers.js';
import { createProgressBar } from './progress-bar.js';
import { bulkRequestOf, type BulkOptions } from './retry-in-bulk.js';
import { UsageError } from './usage-error.js';

export interface BulkCancelOptions extends BulkOptions {
  status?: string;
  concurrencyKey?: string;
  dryRun?: boolean;
  json?: boolean;
}

/** The bulk filters of `agentq cancel`: any of them makes it a bulk cancel. */
export function isBulkCancel(options: BulkCancelOptions): boolean {
  return ['status', 'error', 'since', 'until', 'graph', 'concurrencyKey'].some(
    (name) => options[name as keyof BulkCancelOptions] !== undefined,
  );
}

/** `--status queued,running` as statuses a run can be cancelled in; a usage error otherwise. */
function statusesOf(text: string | undefined): CancellableStatus[] {
  const statuses = (text ?? '').split(',').map((status) => status.trim());
  const wrong = statuses.filter((status) => !(CANCELLABLE_STATUSES as readonly string[]).includes(status));
  if (text === undefined || wrong.length > 0)
    throw new UsageError(
      `cancel in bulk takes --status with one or more of ${CANCELLABLE_STATUSES.join(', ')} (comma-separated)${text === undefined ? '' : `, not '${wrong.join(',')}'`}; or give one run id`,
    );
  return statuses as CancellableStatus[];
}

/** `agentq cancel --status queued …`: the matching runs counted first, then cancelled at `--rate`, then a summary. */
export async function cancelInBulk(clients: ProducerClients, options: BulkCancelOptions, io: Io): Promise<void> {
  const status = statusesOf(options.status);
  const request = bulkRequestOf(options);
  const filter = {
    status,
    ...request.filter,
    ...(options.concurrencyKey ? { concurrencyKey: options.concurrencyKey } : {}),
  };
  const { limits } = request;
  const client = await clients.client();
  try {
    const counted = await client.cancelRuns(filter, { ...limits, dryRun: true });
    io.err(
      `${counted.matched} run${counted.matched === 1 ? '' : 's'} match${options.dryRun ? ' (dry run: nothing cancelled)' : `; cancelling at up to ${options.rate ?? 100}/s…`}`,
    );
    let summary = counted;
    if (!options.dryRun) {
      const bar = createProgressBar(process.stderr, 'cancelling', 'runs');
      let failed = 0;
      summary = await client.cancelRuns(filter, {
        ...limits,
        onProgress: ({ outcome, done, total }) => {
          if (outcome === 'error') failed += 1;
          bar.update({ done: done - failed, failed, total });
        },
      });
      bar.finish();
    }
    if (summary.errors.length > 0) io.setExitCode(1);
    if (options.json) io.out(JSON.stringify(summary));
    else if (options.dryRun) io.out(summary.runs.join('\n'));
    else
      io.out(
        [
          ...summary.cancelled.map((id) => `${id} cancelled`),
          ...summary.cancelling.map((id) => `${id} cancelling (ends at its step boundary)`),
          ...summary.skipped.map(({ runId, reason }) => `${runId} skipped: ${reason}`),
          ...summary.errors.map(({ runId, code, message }) => `${runId} not cancelled: ${code}: ${message}`),
          `${summary.matched} matched: ${summary.cancelled.length} cancelled, ${summary.cancelling.length} cancelling, ${summary.skipped.length} skipped, ${summary.errors.length} errors`,
        ].join('\n'),
      );
  } finally {
    await client.close();
  }
}
