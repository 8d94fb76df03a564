import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { Keys } from '../../shared/store/keys.js';
import { startScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';
import { expectSecondTurnAnswers, providerBatchWorkerEnv } from './provider-batch-chaos.js';

const WORKER = 'test/chaos/provider-batch-kill-worker.ts';
const LEASE_MS = 1000;

/**
 * A dead collector is replaced within its lease, not after the longest provider call: the collecting worker, with a
 * Batch API request timeout of two minutes, is SIGKILLed after polling its provider batch while a second worker
 * stands by; the second takes the lease over and drives the provider batch to its end.
 */
describe("chaos: the collector's death noticed within its lease", () => {
  const workers: ChildProcess[] = [];
  const clients: AgentClient[] = [];
  const connections: Redis[] = [];
  const serverStarting = startScriptedOpenAIServer({
    script: (request) => ({ content: `re: ${(request.body.messages as { content: string }[]).at(-1)?.content}` }),
    batchApi: { processingMs: 300 },
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(connections.map((connection) => connection.quit()));
    await (await serverStarting).close();
  });

  it("a killed collector's provider batch moves on under the standby worker", async () => {
    const server = await serverStarting;
    const config = testConfig({ OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' });
    const client = new AgentClient({ config });
    clients.push(client);
    const redis = new Redis(config.redisUrl!);
    connections.push(redis);
    const lease = new Keys(config.keyPrefix).providerBatchesLease();
    const env = providerBatchWorkerEnv(config, server.url, {
      // A provider call may take two minutes: a lease that had to outlast one would hold the batch that long.
      AGENTQ_LLM_TIMEOUT_MS: '120000',
      AGENTQ_PROVIDER_BATCH_LEASE_MS: String(LEASE_MS),
    });
    const killer = await spawnWorker(WORKER, { ...env, KILL_AT_POINT: 'polled' });
    workers.push(killer);
    // The first worker holds the lease before the standby starts: the one killed is the collector.
    const holder = await eventually(async () => (await redis.get(lease)) ?? undefined, 30_000, 'the first lease');
    workers.push(await spawnWorker(WORKER, env));
    const died = new Promise<void>((resolve) => killer.once('exit', () => resolve()));
    const { batch } = await client.batches.submit({
      questions: ['a', 'b', 'c'].map((question) => ({ question: `death ${question}` })),
      options: { graph: 'two-turns' },
      providerBatch: true,
    });
    await died;
    const diedAt = Date.now();
    expect(killer.signalCode).toBe('SIGKILL');
    // What the dead collector leaves behind: a lease that lapses within its own length, whatever a provider call may take.
    const left = await redis.pttl(lease);
    expect(left).toBeLessThanOrEqual(LEASE_MS);
    const requestsAtDeath = server.requests.length;

    const done = await eventually(
      async () => {
        const record = await client.batches.get(batch.id);
        return record?.status === 'completed' && record;
      },
      60_000,
      "the killed collector's batch to complete under the standby",
    );
    expect(done.progress).toMatchObject({ total: 3, completed: 3, failed: 0 });
    // In order: the death, the standby taking the lease, its next Batch API request, the batch's end.
    const after = server.requests.slice(requestsAtDeath).filter((request) => request.path.includes('/batches'));
    expect(after.length).toBeGreaterThan(0);
    expect(await redis.get(lease)).not.toBe(holder);
    const created = server.batchApi!.batches.filter((entry) => entry.metadata.agentq_batch === batch.id);
    expect(created.map((entry) => entry.metadata.agentq_flush)).toEqual([`${batch.id}.f1`, `${batch.id}.f2`]);
    await expectSecondTurnAnswers(client, batch.id);
    // The stall (a figure, not asserted): the death to the standby's first Batch API request.
    console.info(`provider batch stall after the collector's death: ${after[0]!.receivedAt - diedAt} ms`);
  });
});
