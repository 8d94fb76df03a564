import type { Command } from 'commander';
import type { Io, ProducerClients } from './command-helpers.js';
import { registerRunCommand } from './run-command.js';
import { registerRunControlCommands } from './run-control-commands.js';
import { registerEventCommands } from './event-commands.js';
import { registerRunListCommands } from './run-list-commands.js';
import { registerRunReadCommands } from './run-read-commands.js';
export { EXIT, parseCount, withClient, type ProducerClients } from './command-helpers.js';
export { UsageError } from './usage-error.js';

/** The producer's commands: run, status, steps, cancel, retry (one run or in bulk), runs, events, purge. */
export function registerProducerCommands(program: Command, clients: ProducerClients, io: Io): void {
  registerRunCommand(program, clients, io);
  registerRunReadCommands(program, clients, io);
  registerRunControlCommands(program, clients, io);
  registerEventCommands(program, clients, io);
  registerRunListCommands(program, clients, io);
}
