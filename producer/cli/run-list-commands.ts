import type { Command } from 'commander';
import { RUN_STATUSES, isTerminal, type RunStatus } from '../../shared/contracts/run-record.js';
import { describeRun, parseCount, withClient, type Io, type ProducerClients } from './command-helpers.js';
import { sinceOf } from './retry-in-bulk.js';
import { UsageError } from './usage-error.js';

/** The commands that list: a tenant's runs (and rebuild their lists), and a run's events. */
export function registerRunListCommands(program: Command, clients: ProducerClients, io: Io): void {
  program
    .command('runs')
    .description("list the tenant's runs, newest first")
    .option('--status <status>', `one of ${RUN_STATUSES.join(', ')}`)
    .option('--graph <name>', 'only runs of this graph')
    .option('--error <code>', 'only runs whose error has this code, e.g. PROVIDER_ERROR (failed runs: dead letters)')
    .option('--since <when>', 'only runs created since then: a duration back (30m, 1h, 7d) or an ISO time')
    .option('--limit <n>', 'at most this many (default 50)', parseCount('--limit'))
    .option('--cursor <cursor>', 'continue after a previous page')
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
    .option('--json', 'print {runs, nextCursor} as JSON')
    .action(
      async (options: {
        status?: string;
        graph?: string;
        error?: string;
        since?: string;
        limit?: number;
        cursor?: string;
        tenant?: string;
        json?: boolean;
      }) => {
        if (options.status && !RUN_STATUSES.includes(options.status as RunStatus)) {
          throw new UsageError(`--status must be one of ${RUN_STATUSES.join(', ')}, got '${options.status}'`);
        }
        const since = options.since === undefined ? undefined : sinceOf(options.since);
        await withClient(clients.reader, async (client) => {
          const page = await client.list({
            ...(options.status ? { status: options.status as RunStatus } : {}),
            ...(options.graph ? { graph: options.graph } : {}),
            ...(options.error ? { errorCode: options.error } : {}),
            ...(since === undefined ? {} : { since }),
            ...(options.limit ? { limit: options.limit } : {}),
            ...(options.cursor ? { cursor: options.cursor } : {}),
            ...(options.tenant ? { tenant: options.tenant } : {}),
          });
          io.out(
            options.json
              ? JSON.stringify(page)
              : page.runs.map((record) => describeRun(record).split('\n')[0]).join('\n'),
          );
        });
      },
    );

  program
    .command('reindex-runs')
    .description("rebuild the tenants' run lists from the runs that exist (adds missing entries only)")
    .option('--tenant <tenant>', "only this tenant's runs (the whole keyspace is scanned either way)")
    .option('--count <n>', 'keys looked at per SCAN call (default 1000)', parseCount('--count'))
    .option('--json', 'print {runs, added} as JSON')
    .action(async (options: { tenant?: string; count?: number; json?: boolean }) => {
      await withClient(clients.reader, async (client) => {
        const result = await client.reindex({
          ...(options.tenant ? { tenant: options.tenant } : {}),
          ...(options.count ? { count: options.count } : {}),
        });
        io.out(
          options.json
            ? JSON.stringify(result)
            : `${result.runs} runs found, ${result.added} put back in their tenant's list`,
        );
      });
    });

  program
    .command('events')
    .description("print a run's events as JSON lines, following until run-end")
    .argument('<runId>')
    .option('--after <id>', 'start after this event id')
    .option(
      '--follow',
      "also print the model's text live, as `token` / `token-reset` lines (not stored; the committed message is the record)",
    )
    .action(async (runId: string, options: { after?: string; follow?: boolean }) => {
      await withClient(clients.reader, async (client) => {
        const from = options.after ? { after: options.after } : {};
        for await (const event of options.follow ? client.stream(runId, from) : client.events(runId, from)) {
          io.out(JSON.stringify(event));
          if (event.type === 'run-end' && isTerminal(String(event.data.status) as RunStatus)) break;
        }
      });
    });
}
