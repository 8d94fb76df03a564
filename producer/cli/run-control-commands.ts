import type { Command } from 'commander';
import { parseCount, parseJson, withClient, type Io, type ProducerClients } from './command-helpers.js';
import { cancelInBulk, isBulkCancel, type BulkCancelOptions } from './cancel-in-bulk.js';
import { retryInBulk, type BulkRetryOptions } from './retry-in-bulk.js';
import { UsageError } from './usage-error.js';

/** The commands that act on one run: cancel and retry (one run or in bulk), resume, purge. */
export function registerRunControlCommands(program: Command, clients: ProducerClients, io: Io): void {
  program
    .command('cancel')
    .description(
      'cancel a run (at its next step boundary; the running step is aborted); or, with --status, every run that matches, counted first',
    )
    .argument('[runId]', 'the run to cancel (leave out to cancel in bulk with --status)')
    .option('--status <statuses>', 'bulk: queued, running, waiting, or several comma-separated (required in bulk)')
    .option('--graph <name>', 'bulk: only runs of this graph')
    .option(
      '--error <code>',
      'bulk: only runs carrying this error code (in flight: the failure they were retried from)',
    )
    .option('--concurrency-key <key>', 'bulk: only runs held to this concurrency key')
    .option('--since <when>', 'bulk: only runs created since then: a duration back (30m, 1h, 7d) or an ISO time')
    .option('--until <when>', 'bulk: only runs created before then: a duration back (30m, 1h, 7d) or an ISO time')
    .option('--tenant <tenant>', 'bulk: tenant (default AGENTQ_TENANT)')
    .option('--dry-run', 'bulk: count and list the matching runs; cancel nothing')
    .option('--rate <n>', 'bulk: at most this many cancels a second (default 100)', parseCount('--rate'))
    .option('--limit <n>', 'bulk: at most this many runs (default 1000)', parseCount('--limit'))
    .option('--json', 'print the run record (bulk: the summary) as JSON')
    .action(async (runId: string | undefined, options: BulkCancelOptions) => {
      if (runId !== undefined && isBulkCancel(options))
        throw new UsageError(
          'give a run id, or the bulk filters (--status, --graph, --error, --since, --until), not both',
        );
      if (runId === undefined) {
        await cancelInBulk(clients, options, io);
        return;
      }
      await withClient(clients.client, async (client) => {
        const record = await client.cancel(runId);
        io.out(options.json ? JSON.stringify(record) : `${record.id} ${record.status}`);
      });
    });

  program
    .command('retry')
    .description(
      'retry a failed run from its last commit; or, with --status failed, every failed run that matches (dead letters), counted first',
    )
    .argument('[runId]', 'the run to retry (leave out to retry in bulk with --status failed)')
    .option('--status <status>', "bulk: 'failed' (the only status that can be retried)")
    .option('--error <code>', 'bulk: only runs that failed with this error code, e.g. PROVIDER_ERROR')
    .option('--since <when>', 'bulk: only runs created since then: a duration back (30m, 1h, 7d) or an ISO time')
    .option('--graph <name>', 'bulk: only runs of this graph')
    .option('--tenant <tenant>', 'bulk: tenant (default AGENTQ_TENANT)')
    .option('--dry-run', 'bulk: count and list the matching runs; retry nothing')
    .option('--rate <n>', 'bulk: at most this many retries a second (default 5)', parseCount('--rate'))
    .option('--limit <n>', 'bulk: at most this many runs (default 1000)', parseCount('--limit'))
    .option('--json', 'print the run record (bulk: the summary) as JSON')
    .action(async (runId: string | undefined, options: BulkRetryOptions) => {
      const bulk = options.status !== undefined || options.error !== undefined || options.since !== undefined;
      if (runId !== undefined && bulk)
        throw new UsageError('give a run id, or the bulk filters (--status failed, --error, --since), not both');
      if (runId === undefined) {
        await retryInBulk(clients, options, io);
        return;
      }
      await withClient(clients.client, async (client) => {
        const record = await client.retry(runId);
        io.out(options.json ? JSON.stringify(record) : `${record.id} ${record.status}`);
      });
    });

  program
    .command('resume')
    .description('answer a run waiting on an interrupt')
    .argument('<runId>')
    .requiredOption('--value <json>', 'the answer as JSON')
    .option('--json', 'print the run record as JSON')
    .action(async (runId: string, options: { value: string; json?: boolean }) => {
      const value = parseJson('--value', options.value);
      await withClient(clients.client, async (client) => {
        const record = await client.resume(runId, value);
        io.out(options.json ? JSON.stringify(record) : `${record.id} ${record.status}`);
      });
    });

  program
    .command('purge')
    .description('delete a finished run now')
    .argument('<runId>')
    .action(async (runId: string) => {
      await withClient(clients.reader, async (client) => {
        await client.purge(runId);
        io.out(`${runId} purged`);
      });
    });
}
