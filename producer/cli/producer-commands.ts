import type { Command } from 'commander';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { OnBusy } from '../../shared/contracts/job-schema.js';
import { RUN_STATUSES, isTerminal, type RunRecord, type RunStatus } from '../../shared/contracts/run-record.js';
import type { AgentClient } from '../client/agent-client.js';
import type { RunReader } from '../client/run-reader.js';
import type { RunRecordSource } from '../client/run-record-reader.js';
import { readRunInput } from './read-run-input.js';
import { retryInBulk, sinceOf, type BulkRetryOptions } from './retry-in-bulk.js';
export { UsageError } from './usage-error.js';
import { UsageError } from './usage-error.js';

/** Exit codes: 0 ok; 1 the run failed or was cancelled (or the command failed); 2 usage error. */
export const EXIT = { ok: 0, runFailed: 1, usage: 2 } as const;

interface Io {
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

function exitFor(record: RunRecord): number {
  return record.status === 'failed' || record.status === 'cancelled' ? EXIT.runFailed : EXIT.ok;
}

function describe(record: RunRecord): string {
  const lines = [
    `${record.id}  ${record.status}  ${record.graph}@${record.graphVersion ?? '?'}  steps=${record.stepCount}`,
  ];
  if (record.output !== null && record.output !== undefined) lines.push(`output: ${JSON.stringify(record.output)}`);
  if (record.error) lines.push(`error: ${record.error.code}: ${record.error.message}`);
  return lines.join('\n');
}

function parseJson(flag: string, text: string): unknown {
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

/** The producer's commands: run, status, steps, cancel, retry (one run or in bulk), runs, events, purge. */
export function registerProducerCommands(program: Command, clients: ProducerClients, io: Io): void {
  program
    .command('run')
    .description('enqueue a run of <graph>')
    .argument('<graph>', 'graph name, e.g. chain')
    .option('--input <json>', "the run input as JSON; '-' reads it from stdin")
    .option('--input-file <file>', 'read the run input (JSON) from a file: for inputs too big for the command line')
    .option(
      '--queue-unserved',
      'queue it even if no live worker serves the graph (it waits AGENTQ_UNSERVED_GRAPH_WAIT_MS for one)',
    )
    .option('--graph-version <version>', 'pin a graph version (default: the workers’ latest)')
    .option('--idempotency-key <key>', 'the same key returns the same run')
    .option('--run-id <id>', 'choose the run id')
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
    .option('--max-steps <n>', 'step limit for this run', parseCount('--max-steps'))
    .option('--deadline-ms <ms>', 'deadline for this run', parseCount('--deadline-ms'))
    .option(
      '--priority <n>',
      'BullMQ priority of its steps: 1 most urgent; runs without one go first',
      parseCount('--priority'),
    )
    .option('--conversation <id>', "continue this conversation (its latest completed turn's history)")
    .option(
      '--on-busy <mode>',
      "with --conversation, while its previous turn is unfinished: 'queue' behind it, 'cancel' it, or 'reject' this turn",
    )
    .option('--wait', 'wait for the run to finish')
    .option('--timeout-ms <ms>', 'with --wait: give up after this long', parseCount('--timeout-ms'))
    .option('--json', 'print the run record as JSON')
    .action(async (graph: string, options: Record<string, string | number | boolean | undefined>) => {
      const input = await readRunInput({
        ...(options.input === undefined ? {} : { input: String(options.input) }),
        ...(options.inputFile === undefined ? {} : { inputFile: String(options.inputFile) }),
      });
      await withClient(clients.client, async (client) => {
        const runOptions = {
          ...(options.maxSteps === undefined ? {} : { maxSteps: Number(options.maxSteps) }),
          ...(options.deadlineMs === undefined ? {} : { deadlineMs: Number(options.deadlineMs) }),
        };
        let record: RunRecord;
        try {
          record = await client.enqueue(
            {
              graph,
              input,
              ...(options.graphVersion ? { graphVersion: String(options.graphVersion) } : {}),
              ...(options.idempotencyKey ? { idempotencyKey: String(options.idempotencyKey) } : {}),
              ...(options.runId ? { runId: String(options.runId) } : {}),
              ...(options.tenant ? { tenant: String(options.tenant) } : {}),
              ...(options.priority === undefined ? {} : { priority: Number(options.priority) }),
              ...(options.conversation ? { conversationId: String(options.conversation) } : {}),
              // Checked by the request schema (onBusy), whose message names the field.
              ...(options.onBusy ? { onBusy: String(options.onBusy) as OnBusy } : {}),
              ...(Object.keys(runOptions).length > 0 ? { options: runOptions } : {}),
            },
            { queueUnserved: Boolean(options.queueUnserved) },
          );
        } catch (error) {
          if (AgentqError.isInstance(error) && error.code === 'INVALID_INPUT') throw new UsageError(error.message);
          throw error;
        }
        if (options.wait) {
          io.err(`enqueued ${record.id}; waiting…`);
          record = await client.wait(
            record.id,
            options.timeoutMs === undefined ? {} : { timeoutMs: Number(options.timeoutMs) },
          );
          io.setExitCode(exitFor(record));
        }
        io.out(options.json ? JSON.stringify(record) : options.wait ? describe(record) : record.id);
      });
    });

  program
    .command('status')
    .description('show a run record')
    .argument('<runId>')
    .option('--json', 'print the run record as JSON')
    .action(async (runId: string, options: { json?: boolean }) => {
      await withClient(clients.record, async (client) => {
        const record = await client.get(runId);
        if (!record) throw new AgentqError('NOT_FOUND', `run ${runId} not found (it may have expired or been purged)`);
        io.out(options.json ? JSON.stringify(record) : describe(record));
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
        io.out(options.json ? JSON.stringify(record) : describe(record));
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
    .command('cancel')
    .description('cancel a run (at its next step boundary; the running step is aborted)')
    .argument('<runId>')
    .option('--json', 'print the run record as JSON')
    .action(async (runId: string, options: { json?: boolean }) => {
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
            options.json ? JSON.stringify(page) : page.runs.map((record) => describe(record).split('\n')[0]).join('\n'),
          );
        });
      },
    );

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
