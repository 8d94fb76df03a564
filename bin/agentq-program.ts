/**
 * The `agentq` command tree, built but not run: `bin/agentq.ts` parses the arguments with it, and the CLI
 * reference page (docs/reference/cli.md) is generated from its help (`npm run docs:cli`). Heavy modules
 * load lazily inside each command's action, so building the tree stays cheap.
 */
import { Command } from 'commander';
import { registerProducerCommands, UsageError } from '../producer/cli/producer-commands.js';
import { registerBatchCommand } from '../producer/cli/batch-command.js';
import { registerScheduleCommands } from '../producer/cli/schedule-commands.js';
import { registerBudgetCommands } from '../producer/cli/budget-commands.js';
import { registerAnswerCacheCommands } from '../producer/cli/answer-cache-commands.js';
import { registerGraphCommands } from '../producer/cli/graph-commands.js';
import { registerTimeTravelCommands } from '../producer/cli/time-travel-commands.js';
import { registerConversationCommands } from '../producer/cli/conversation-commands.js';

/** Where a command writes: results to `out`, progress and diagnostics to `err`. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  setExitCode(code: number): void;
}

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
// Read commands get the reader: no BullMQ, no enqueue path (cold start).
const readerFactory = async () => {
  const { RunReader } = await import('../producer/client/run-reader.js');
  return new RunReader();
};
// `status` reads one record: without ioredis where a bare connection can reach Redis (cold start).
const recordFactory = async () => {
  const [{ readRedisConfig }, { openRunRecordSource }] = await Promise.all([
    import('../shared/config/redis-config.js'),
    import('../producer/client/run-record-reader.js'),
  ]);
  return openRunRecordSource(readRedisConfig());
};

/** Every `agentq` command, registered on a fresh commander program that throws instead of exiting. */
export async function createAgentqProgram(io: CliIo): Promise<Command> {
  const program = new Command();
  program
    .name('agentq')
    .description('Queue-driven background agent worker. Reads REDIS_URL (default redis://127.0.0.1:6379).')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => process.stdout.write(text),
      writeErr: (text) => process.stderr.write(text),
    });
  registerProducerCommands(program, { client: clientFactory, reader: readerFactory, record: recordFactory }, io);
  registerBatchCommand(program, clientFactory, parseCount, io.setExitCode);
  registerConversationCommands(program, readerFactory, io);
  registerScheduleCommands(program, clientFactory, io);
  registerBudgetCommands(program, clientFactory, io);
  registerAnswerCacheCommands(program, clientFactory, io);
  registerGraphCommands(program, clientFactory, io);
  registerTimeTravelCommands(program, clientFactory, io);
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
  return program;
}
