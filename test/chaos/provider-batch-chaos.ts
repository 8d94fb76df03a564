import { expect } from 'vitest';
import type { AgentClient } from '../../producer/client/agent-client.js';
import type { Config } from '../../shared/config/config.js';
import { workerEnv } from '../helpers/worker-processes.js';

/** A chaos worker's environment for the two-turns graph through the scripted server's Batch API, with short leases. */
export function providerBatchWorkerEnv(
  config: Pick<Config, 'redisUrl' | 'keyPrefix' | 'queuePrefix'>,
  serverUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return workerEnv(config, {
    OPENAI_BASE_URL: serverUrl,
    LLM_MODEL: 'scripted-chat',
    AGENTQ_LLM_TIMEOUT_MS: '1000',
    AGENTQ_PROVIDER_BATCH_POLL_MS: '100',
    AGENTQ_LOCK_DURATION_MS: '2000',
    AGENTQ_STALLED_INTERVAL_MS: '1000',
    ...extra,
  });
}

/** Every question of a two-turns batch got its second turn's answer from the scripted server. */
export async function expectSecondTurnAnswers(client: AgentClient, batchId: string): Promise<void> {
  const results = (await client.batches.results(batchId))!;
  expect(results.map((result) => result.answer)).toEqual([
    're: Now say it better.',
    're: Now say it better.',
    're: Now say it better.',
  ]);
}
