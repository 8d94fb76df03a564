#!/usr/bin/env node
/**
 * The `agentq` command. stdout carries only each command's result; logs and progress go to stderr.
 * Exit 0 ok · 1 the run failed or was cancelled (or the command failed) · 2 usage error.
 * Heavy modules load lazily so a one-shot command starts fast.
 */
import { Command, CommanderError } from 'commander';
import { EXIT, registerProducerCommands, UsageError } from '../producer/cli/producer-commands.js';
import { registerBatchCommand } from '../producer/cli/batch-command.js';
import { registerScheduleCommands } from '../producer/cli/schedule-commands.js';
import { registerBudgetCommands } from '../producer/cli/budget-commands.js';
import { AgentqError } from '../shared/contracts/errors.js';

const program = new Command();
program
  .name('agentq')
  .description('Queue-driven background agent worker. Reads REDIS_URL (default redis://127.0.0.1:6379).')
  .exitOverride()
  .configureOutput({ writeOut: (text) => process.stdout.write(text), writeErr: (text) => process.stderr.write(text) });

const io = {
  out: (text: string) => process.stdout.write(`${text}\n`),
  err: (text: string) => process.stderr.write(`${text}\n`),
  setExitCode: (code: number) => {
    process.exitCode = code;
  },
};

const parseCount = (name: string) => (value: string) => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1)
    throw new UsageError(`${name} must be a positive integer, got '${value}'`);
  return number;
};

const clientFactory = async () => {
  const { AgentClient } = await import('../producer/client/agent-client.js');
  return new AgentClient();
};
// Read commands get the reader: no BullMQ, no enqueue path (cold start, issue 19).
const readerFactory = async () => {
  const { RunReader } = await import('../producer/client/run-reader.js');
  return new RunReader();
};
// `status` reads one record: without ioredis where a bare connection can reach Redis (cold start, issue 19).
const recordFactory = async () => {
  const [{ readRedisConfig }, { openRunRecordSource }] = await Promise.all([
    import('../shared/config/redis-config.js'),
    import('../producer/client/run-record-reader.js'),
  ]);
  return openRunRecordSource(readRedisConfig());
};
registerProducerCommands(program, { client: clientFactory, reader: readerFactory, record: recordFactory }, io);
registerBatchCommand(program, clientFactory, parseCount, io.setExitCode);
registerScheduleCommands(program, clientFactory, io);
registerBudgetCommands(program, clientFactory, io);
const { registerWorkerCommand } = await import('../worker/worker-command.js');
registerWorkerCommand(program, parseCount);
const { registerApiCommand } = await import('../producer/api/api-command.js');
registerApiCommand(program);
const { registerIngestCommands } = await import('../producer/cli/ingest-commands.js');
registerIngestCommands(program, io);
const { registerReindexCommand } = await import('../shared/adapters/qdrant/qdrant-reindex-command.js');
registerReindexCommand(program, io);
const { registerStartCommand } = await import('./start-command.js');
registerStartCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    // --help and --version end here with exit code 0.
    process.exitCode = error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  } else if (error instanceof UsageError || (error instanceof Error && error.name === 'InvalidArgumentError')) {
    io.err(`agentq: ${error.message}`);
    process.exitCode = EXIT.usage;
  } else {
    const message = AgentqError.isInstance(error)
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? error.message
        : String(error);
    io.err(`agentq: ${message}`);
    process.exitCode = EXIT.runFailed;
  }
}
