import type { Command } from 'commander';
import { parseJson, withClient, type Io, type ProducerClients } from './command-helpers.js';
import { UsageError } from './usage-error.js';

interface EventSendOptions {
  run?: string;
  key?: string;
  name: string;
  data?: string;
  json?: boolean;
}

/** `agentq event send`: an event to a run or to a correlation key, for the steps waiting on it (`context.waitFor`). */
export function registerEventCommands(program: Command, clients: ProducerClients, io: Io): void {
  const event = program.command('event').description('events that wake steps waiting with context.waitFor');
  event
    .command('send')
    .description('send an event to a run (--run) or to every run waiting on a correlation key (--key)')
    .option('--run <runId>', 'the run to send it to')
    .option('--key <key>', 'a correlation key of the tenant (AGENTQ_TENANT)')
    .requiredOption('--name <name>', 'the event name the wait names')
    .option('--data <json>', 'the payload as JSON (default null)')
    .option('--json', 'print the answer as JSON')
    .action(async (options: EventSendOptions) => {
      if ((options.run === undefined) === (options.key === undefined))
        throw new UsageError('give --run <runId> or --key <key> (one of the two)');
      const data = options.data === undefined ? null : parseJson('--data', options.data);
      const target = options.run === undefined ? { key: options.key! } : { runId: options.run };
      await withClient(clients.client, async (client) => {
        const sent = await client.sendEvent({ ...target, name: options.name, data });
        io.out(
          options.json
            ? JSON.stringify(sent)
            : `${sent.eventId} reached ${sent.reached} waiting run(s)${sent.stored ? `, kept until ${sent.expiresAt}` : ''}`,
        );
      });
    });
}
