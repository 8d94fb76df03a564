import type { Command } from 'commander';
import type { AgentClient } from '../client/agent-client.js';
import { withClient } from './producer-commands.js';

interface Io {
  out(text: string): void;
}

/**
 * `agentq answer-cache clear [--collection <name>] [--tenant <tenant>]`: the CLI side of `DELETE /v1/answer-cache`
 * (docs/guides/batch-qa.md#answer-cache). The CLI talks to Redis directly, so it acts as the deployment's operator.
 */
export function registerAnswerCacheCommands(program: Command, clientFactory: () => Promise<AgentClient>, io: Io): void {
  program
    .command('answer-cache')
    .description("a tenant's cached answers (batches with --answer-cache): clear")
    .command('clear')
    .description('answers cached before are never returned again: of one collection, or of every one')
    .option('--collection <name>', 'only this collection (default: every collection)')
    .option('--tenant <tenant>', 'tenant (default AGENTQ_TENANT)')
    .action(async (options: { collection?: string; tenant?: string }) => {
      await withClient(clientFactory, async (client) => {
        await client.clearAnswerCache({
          ...(options.collection ? { collection: options.collection } : {}),
          ...(options.tenant ? { tenant: options.tenant } : {}),
        });
        io.out(
          `cleared the answer cache of ${options.collection ? `collection ${options.collection}` : 'every collection'}`,
        );
      });
    });
}
