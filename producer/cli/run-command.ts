import type { Command } from 'commander';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { OnBusy } from '../../shared/contracts/job-schema.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { describeRun, exitFor, parseCount, withClient, type Io, type ProducerClients } from './command-helpers.js';
import { readRunInput } from './read-run-input.js';
import { UsageError } from './usage-error.js';

/** `agentq run`: enqueue a run of a graph, and with --wait follow it to its end. */
export function registerRunCommand(program: Command, clients: ProducerClients, io: Io): void {
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
        io.out(options.json ? JSON.stringify(record) : options.wait ? describeRun(record) : record.id);
      });
    });
}
