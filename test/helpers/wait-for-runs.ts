import type { AgentClient } from '../../producer/client/agent-client.js';
import { isTerminal, type RunRecord } from '../../shared/contracts/run-record.js';

/**
 * Resolves once every run is finished (terminal or waiting), polling on the client's one connection:
 * hundreds of `client.wait` calls would each hold a blocking Redis connection of their own.
 * Rejects after `timeoutMs`, naming how many runs were still going and one of them.
 */
export async function waitForRuns(
  client: AgentClient,
  runIds: readonly string[],
  { timeoutMs, pollMs = 250 }: { timeoutMs: number; pollMs?: number },
): Promise<RunRecord[]> {
  const finished = new Map<string, RunRecord>();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending = runIds.filter((id) => !finished.has(id));
    for (const [index, record] of (await Promise.all(pending.map((id) => client.get(id)))).entries()) {
      if (record && (isTerminal(record.status) || record.status === 'waiting')) finished.set(pending[index]!, record);
    }
    const left = runIds.filter((id) => !finished.has(id));
    if (left.length === 0) return runIds.map((id) => finished.get(id)!);
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms: ${left.length} of ${runIds.length} runs not finished (e.g. ${left[0]})`,
      );
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
