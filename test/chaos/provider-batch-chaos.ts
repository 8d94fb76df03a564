import type { ChildProcess } from 'node:child_process';
import { afterAll, expect } from 'vitest';
import type { AgentClient } from '../../producer/client/agent-client.js';
import type { Config } from '../../shared/config/config.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { eventually } from '../helpers/test-env.js';
import { killHard, workerEnv } from '../helpers/worker-processes.js';

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

/** The processes, clients and scripted server of one provider-batch chaos file, all closed after it. */
export interface ProviderBatchChaos {
  workers: ChildProcess[];
  clients: AgentClient[];
  server: Promise<ScriptedOpenAIServer>;
}

/** A scripted server (answering `re: <last message>`, with a Batch API) and the lists closed after the file's tests. */
export function providerBatchChaos(): ProviderBatchChaos {
  const chaos: ProviderBatchChaos = {
    workers: [],
    clients: [],
    server: startScriptedOpenAIServer({
      script: (request) => ({ content: `re: ${(request.body.messages as { content: string }[]).at(-1)?.content}` }),
      batchApi: { processingMs: 300 },
    }),
  };
  afterAll(async () => {
    await Promise.all(chaos.workers.map((worker) => killHard(worker)));
    await Promise.all(chaos.clients.map((client) => client.close()));
    await (await chaos.server).close();
  });
  return chaos;
}

/** Submits three questions of the two-turns graph through the provider's Batch API; → the batch's id. */
export async function submitTwoTurns(client: AgentClient, label: string): Promise<string> {
  const { batch } = await client.batches.submit({
    questions: ['a', 'b', 'c'].map((question) => ({ question: `${label} ${question}` })),
    options: { graph: 'two-turns' },
    providerBatch: true,
  });
  return batch.id;
}

/** Waits for the batch to complete, every question answered. */
export async function expectCompleted(client: AgentClient, batchId: string, what: string): Promise<void> {
  const done = await eventually(
    async () => {
      const record = await client.batches.get(batchId);
      return record?.status === 'completed' && record;
    },
    60_000,
    what,
  );
  expect(done.progress).toMatchObject({ total: 3, completed: 3, failed: 0 });
}
