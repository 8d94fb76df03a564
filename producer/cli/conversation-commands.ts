import type { Command } from 'commander';
import type { RunReader } from '../client/run-reader.js';
import { withClient } from './producer-commands.js';
import { contentText } from '../../shared/contracts/run-record.js';

interface Io {
  out(text: string): void;
}

/** `agentq result` and `agentq conversation show|clear`: a run's result object; a conversation by id. */
export function registerConversationCommands(program: Command, reader: () => Promise<RunReader>, io: Io): void {
  program
    .command('result')
    .description("show a run's result: answer, tool executions, intermediate responses, sources, finish reason")
    .argument('<runId>')
    .option('--json', 'print the result object as JSON')
    .action(async (runId: string, options: { json?: boolean }) => {
      await withClient(reader, async (client) => {
        const result = await client.result(runId);
        if (options.json) return io.out(JSON.stringify(result));
        const lines = [`${result.runId}  ${result.status}  finishReason=${result.finishReason ?? '-'}`];
        for (const execution of result.toolExecutions)
          lines.push(`tool ${execution.name}(${execution.arguments}) → ${execution.result ?? '(no result)'}`);
        lines.push(`intermediate responses: ${result.intermediateResponses.length}, sources: ${result.sources.length}`);
        if (result.answer !== null) lines.push(`answer: ${result.answer}`);
        if (result.error) lines.push(`error: ${result.error.code}: ${result.error.message}`);
        io.out(lines.join('\n'));
      });
    });

  const conversation = program.command('conversation').description('read or clear a conversation by its id');
  conversation
    .command('show')
    .description("a conversation's turns and what it remembers (the history its next turn starts from)")
    .argument('<conversationId>')
    .option('--tenant <tenant>', 'the tenant whose conversation it is (default AGENTQ_TENANT)')
    .option('--json', 'print the conversation as JSON')
    .action(async (conversationId: string, options: { tenant?: string; json?: boolean }) => {
      await withClient(reader, async (client) => {
        const record = await client.conversation(conversationId, options.tenant ? { tenant: options.tenant } : {});
        if (options.json) return io.out(JSON.stringify(record));
        const lines = record.turns.map((turn) => `${turn.runId}\t${turn.status}\t${turn.createdAt}`);
        if (record.activeRunIds.length > 0) lines.push(`unfinished: ${record.activeRunIds.join(', ')}`);
        for (const message of record.messages) lines.push(`[${message.role}] ${contentText(message.content)}`);
        io.out(lines.join('\n'));
      });
    });
  conversation
    .command('clear')
    .description('forget what a conversation remembers: its next turn starts afresh (its runs are kept)')
    .argument('<conversationId>')
    .option('--tenant <tenant>', 'the tenant whose conversation it is (default AGENTQ_TENANT)')
    .action(async (conversationId: string, options: { tenant?: string }) => {
      await withClient(reader, async (client) => {
        await client.clearConversation(conversationId, options.tenant ? { tenant: options.tenant } : {});
        io.out(`cleared ${conversationId}`);
      });
    });
}
