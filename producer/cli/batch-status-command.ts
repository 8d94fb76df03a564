import type { Command } from 'commander';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { BatchRecord } from '../../shared/operations/batches/batch-schema.js';
import type { AgentClient } from '../client/agent-client.js';

/** A planned batch's plan, and its estimate beside what it has spent so far. */
export function describePlan(batch: BatchRecord): string {
  const autopilot = batch.autopilot!;
  const lines = [
    `plan: ${autopilot.plan.mode} (since ${autopilot.plan.at}): ${autopilot.plan.reason}`,
    `deadline: ${autopilot.deadline ?? 'none'}; budget: ${autopilot.budgetUsd === null ? 'none' : `$${autopilot.budgetUsd}`}; modes: ${autopilot.modes.join(',')}`,
    `estimate: $${autopilot.estimate.costUsd.toFixed(6)}, finished by ${autopilot.estimate.finishAt}; actual so far: $${batch.usage.costUsd.toFixed(6)}${batch.finishedAt ? `, finished at ${batch.finishedAt}` : ''}`,
  ];
  if (autopilot.stopped)
    lines.push(
      `stopped at the budget (${autopilot.stopped.at}): ${autopilot.stopped.left.questions} question(s) left, $${autopilot.stopped.left.budgetUsd.toFixed(6)} unspent`,
    );
  return lines.join('\n');
}

/** A batch as `agentq batch status` prints it: progress, usage, its plan, and its provider batches when it has any. */
function describeBatch(batch: BatchRecord): string {
  const { progress } = batch;
  const lines = [
    `batch ${batch.id}: ${batch.status}`,
    `questions: ${progress.total} (completed ${progress.completed}, failed ${progress.failed}, cancelled ${progress.cancelled}, running ${progress.running}, queued ${progress.queued})`,
    `usage: ${batch.usage.inputTokens} input (${batch.usage.cachedInputTokens} cached) + ${batch.usage.outputTokens} output tokens; cost $${batch.usage.costUsd.toFixed(6)} ($${batch.usage.uncachedCostUsd.toFixed(6)} uncached); calls live ${batch.usage.calls.live}, flex ${batch.usage.calls.flex}, batch ${batch.usage.calls.batch}`,
  ];
  if (batch.autopilot) lines.push(describePlan(batch));
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
