import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { Keys } from '../../shared/store/keys.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { spawnWorker } from '../helpers/worker-processes.js';
import {
  expectCompleted,
  expectSecondTurnAnswers,
  providerBatchChaos,
  providerBatchWorkerEnv,
  submitTwoTurns,
} from './provider-batch-chaos.js';

const WORKER = 'test/chaos/provider-batch-kill-worker.ts';
const LEASE_MS = 1000;

/**
 * A dead collector is replaced within its lease, not after the longest provider call: the collecting worker, with a
 * Batch API request timeout of two minutes, is SIGKILLed after polling its provider batch while a second worker
 * stands by; the second takes the lease over and drives the provider batch to its end.
 */
describe("chaos: the collector's death noticed within its lease", () => {
  const { workers, clients, server: serverStarting } = providerBatchChaos();
  const connections: Redis[] = [];
  afterAll(async () => Promise.all(connections.map((connection) => connection.quit())));

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
    const batchId = await submitTwoTurns(client, 'death');
    await died;
    const diedAt = Date.now();
    expect(killer.signalCode).toBe('SIGKILL');
    // What the dead collector leaves behind: a lease that lapses within its own length, whatever a provider call may take.
    const left = await redis.pttl(lease);
    expect(left).toBeLessThanOrEqual(LEASE_MS);
    const requestsAtDeath = server.requests.length;

    await expectCompleted(client, batchId, "the killed collector's batch to complete under the standby");
    // In order: the death, the standby taking the lease, its next Batch API request, the batch's end.
    const after = server.requests.slice(requestsAtDeath).filter((request) => request.path.includes('/batches'));
    expect(after.length).toBeGreaterThan(0);
    expect(await redis.get(lease)).not.toBe(holder);
    const created = server.batchApi!.batches.filter((entry) => entry.metadata.agentq_batch === batchId);
    expect(created.map((entry) => entry.metadata.agentq_flush)).toEqual([`${batchId}.f1`, `${batchId}.f2`]);
    await expectSecondTurnAnswers(client, batchId);
    // The stall (a figure, not asserted): the death to the standby's first Batch API request.
    console.info(`provider batch stall after the collector's death: ${after[0]!.receivedAt - diedAt} ms`);
  });
});
