import type { Command } from 'commander';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { BatchRecord } from '../../shared/operations/batches/batch-schema.js';
import type { AgentClient } from '../client/agent-client.js';

/** A batch as `agentq batch status` prints it: progress, and its provider batches when it has any. */
function describeBatch(batch: BatchRecord): string {
  const { progress } = batch;
  const lines = [
    `batch ${batch.id}: ${batch.status}`,
    `questions: ${progress.total} (completed ${progress.completed}, failed ${progress.failed}, cancelled ${progress.cancelled}, running ${progress.running}, queued ${progress.queued})`,
  ];
  const provider = batch.providerBatch;
  if (provider) {
    lines.push(
      `model calls through the provider's Batch API: ${provider.parked} waiting (${provider.pending} not yet in a provider batch)`,
      `usage: ${provider.usage.inputTokens} input + ${provider.usage.outputTokens} output tokens; cost $${provider.costUsd.toFixed(6)} at batch prices ($${provider.liveCostUsd.toFixed(6)} live)`,
    );
    for (const entry of provider.batches) {
      const counts = entry.requestCounts
        ? ` (${entry.requestCounts.completed} completed, ${entry.requestCounts.failed} failed of ${entry.requestCounts.total})`
        : '';
      lines.push(`  ${entry.id ?? entry.flush}\t${entry.status}\t${entry.requests} requests${counts}`);
    }
  }
  return lines.join('\n');
}

/** `agentq batch status <batchId>`: a batch's progress and, for a provider batch, its provider batches and cost. */
export function registerBatchStatusCommand(batchCommand: Command, clientFactory: () => Promise<AgentClient>): void {
  batchCommand
    .command('status')
    .description("show a batch's progress (and its provider batches, calls waiting and cost at batch prices)")
    .argument('<batchId>')
    .option('--json', 'print the batch record as JSON')
    .action(async (batchId: string, options: { json?: boolean }) => {
      const client = await clientFactory();
      try {
        const batch = await client.batches.get(batchId);
        if (!batch) throw new AgentqError('NOT_FOUND', `batch ${batchId} not found (it may have expired)`);
        process.stdout.write(`${options.json ? JSON.stringify(batch) : describeBatch(batch)}\n`);
      } finally {
        await client.close();
      }
    });
}
