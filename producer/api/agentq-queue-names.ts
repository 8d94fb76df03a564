import * as queueConstants from '../../shared/contracts/queues.js';

/**
 * Every queue name shared/contracts/queues.ts declares (constants whose value starts with `agentq-`), so a queue
 * added there shows up in Bull Board and /metrics without touching the API.
 */
export function agentqQueueNames(): string[] {
  return (Object.values(queueConstants) as unknown[]).filter(
    (value): value is string => typeof value === 'string' && value.startsWith('agentq-'),
  );
}
