import type { Command } from 'commander';
import { AgentqError } from '../../shared/contracts/errors.js';
import { describeRun, exitFor, parseCount, withClient, type Io, type ProducerClients } from './command-helpers.js';

/** The commands that read one run: status, wait, steps, children. */
export function registerRunReadCommands(program: Command, clients: ProducerClients, io: Io): void {
  program
    .command('status')
    .description('show a run record')
    .argument('<runId>')
    .option('--json', 'print the run record as JSON')
    .action(async (runId: string, options: { json?: boolean }) => {
      await withClient(clients.record, async (client) => {
        const record = await client.get(runId);
        if (!record) throw new AgentqError('NOT_FOUND', `run ${runId} not found (it may have expired or been purged)`);
        io.out(options.json ? JSON.stringify(record) : describeRun(record));
        io.setExitCode(exitFor(record));
      });
    });

  program
    .command('wait')
    .description('wait for a run to finish and show its record')
    .argument('<runId>')
    .option('--timeout-ms <ms>', 'give up after this long', parseCount('--timeout-ms'))
    .option('--json', 'print the run record as JSON')
    .action(async (runId: string, options: { json?: boolean; timeoutMs?: number }) => {
      await withClient(clients.reader, async (client) => {
        const record = await client.wait(
          runId,
          options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
        );
        io.out(options.json ? JSON.stringify(record) : describeRun(record));
        io.setExitCode(exitFor(record));
      });
    });

  program
    .command('steps')
    .description('list the committed steps of a run')
    .argument('<runId>')
    .option('--json', 'print a JSON array')
    .action(async (runId: string, options: { json?: boolean }) => {
      await withClient(clients.reader, async (client) => {
        const steps = await client.steps(runId);
        const shown = steps.map(({ index, superstep, node, attempts, startedAt, endedAt, inheritedFrom }) => ({
          index,
          superstep,
          node,
          attempts,
          startedAt,
          endedAt,
          // A fork's steps before its fork point ran in another run.
          ...(inheritedFrom ? { inheritedFrom } : {}),
        }));
        io.out(
          options.json
            ? JSON.stringify(shown)
            : shown
                .map(
                  (step) =>
                    `${step.index}\ts${step.superstep}\t${step.node}\tattempts=${step.attempts}\t${step.startedAt} → ${step.endedAt}${step.inheritedFrom ? `\tinherited from ${step.inheritedFrom}` : ''}`,
                )
                .join('\n'),
        );
      });
    });

  program
    .command('children')
    .description('list the child runs a run started (context.runGraph), a page at a time')
    .argument('<runId>')
    .option('--limit <n>', 'about this many children per page (default 100)', parseCount('--limit'))
    .option('--cursor <cursor>', 'the next page: the cursor the previous page printed')
    .option('--json', 'print the page as JSON ({ children, nextCursor, total })')
    .action(async (runId: string, options: { json?: boolean; limit?: number; cursor?: string }) => {
      await withClient(clients.reader, async (client) => {
        const page = await client.children(runId, {
          ...(options.limit === undefined ? {} : { limit: options.limit }),
          ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
        });
        // The link says who and where; the status is the child's own record, read now.
        const records = await Promise.all(page.children.map((child) => client.get(child.runId)));
        const children = page.children.map((child, at) => ({ ...child, status: records[at]?.status ?? 'missing' }));
        if (options.json) return io.out(JSON.stringify({ ...page, children }));
        // The count and the cursor go to stderr, so stdout stays one child per line for scripts.
        io.err(
          `${children.length} of ${page.total} children${page.nextCursor ? `; next page: --cursor ${page.nextCursor}` : ''}`,
        );
        io.out(
          children
            .map(
              (child) =>
                `${child.runId}\t${child.graph}\t${child.status}\tstep=${child.step}${child.wait ? '\twaited' : ''}`,
            )
            .join('\n'),
        );
      });
    });
}
