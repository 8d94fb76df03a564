import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { OpenAIProviderBatches } from '../../shared/adapters/openai/openai-provider-batches.js';
import { nodeEntry, repoRoot } from '../helpers/node-entry.js';
import { waitForReadiness } from '../helpers/process-readiness.js';
import { testConfig } from '../helpers/test-env.js';
import { spawnWorker } from '../helpers/worker-processes.js';
import {
  expectCompleted,
  expectSecondTurnAnswers,
  providerBatchChaos,
  providerBatchWorkerEnv,
  submitTwoTurns,
} from './provider-batch-chaos.js';

const FAKETIME = '/usr/bin/faketime';
const WORKER = 'test/chaos/provider-batch-kill-worker.ts';

/** A worker whose wall clock runs `offset` ahead (libfaketime), otherwise as spawnWorker starts one. */
async function spawnSkewedWorker(offset: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(FAKETIME, ['-f', offset, process.execPath, nodeEntry(WORKER)], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
  child.stdout.resume();
  await waitForReadiness(child, { what: `worker ${WORKER} under faketime ${offset}`, signal: /ready/ });
  return child;
}

if (!existsSync(FAKETIME))
  console.warn(`skipped: ${FAKETIME} is missing (apt-get install faketime; .ci/run installs it)`);

/**
 * Leases and the recovery of a create that do not trust one machine's wall clock: the collecting worker's clock runs
 * 15 minutes ahead, it dies right after creating a provider batch (before writing it down), another batch appears on
 * the account meanwhile, and a worker with a true clock takes the collector over. It must find the dead one's
 * provider batch rather than create it again.
 */
describe.skipIf(!existsSync(FAKETIME))('chaos: a collector with a skewed clock killed mid-create', () => {
  const { workers, clients, server: serverStarting } = providerBatchChaos();

  it('one provider batch per model turn, no request paid twice', async () => {
    const server = await serverStarting;
    const config = testConfig({ OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' });
    const client = new AgentClient({ config });
    clients.push(client);
    const env = providerBatchWorkerEnv(config, server.url, { AGENTQ_PROVIDER_BATCH_LEASE_MS: '1000' });
    const killer = await spawnSkewedWorker('+15m', { ...env, KILL_AT_POINT: 'created' });
    workers.push(killer);
    const died = new Promise<void>((resolve) => killer.once('exit', () => resolve()));
    const batchId = await submitTwoTurns(client, 'skew');
    await died;
    // faketime runs node as its child and reports the child's SIGKILL as exit 1 ("Caught Killed").
    expect(killer.exitCode).toBe(1);
    // Someone else's batch on the same account, newer than the dead collector's: the list the survivor reads
    // (newest first) now starts with a batch that is not agentq's.
    const account = new OpenAIProviderBatches({ model: 'scripted-chat', baseURL: server.url });
    const line = JSON.stringify({
      custom_id: 'other-1',
      method: 'POST',
      url: account.endpoint,
      body: account.requestBody({ messages: [{ role: 'user', content: 'not agentq' }] }),
    });
    await account.create(await account.upload('other.jsonl', `${line}\n`), { owner: 'someone else' });

    workers.push(await spawnWorker(WORKER, env));
    await expectCompleted(client, batchId, 'the batch of the skewed, killed collector to complete');
    const ours = server.batchApi!.batches.filter((entry) => entry.metadata.agentq_batch === batchId);
    expect(ours.map((entry) => entry.metadata.agentq_flush)).toEqual([`${batchId}.f1`, `${batchId}.f2`]);
    const sent = ours.flatMap((entry) => entry.lines.map((request) => request.custom_id));
    expect(sent).toHaveLength(6);
    expect(new Set(sent).size).toBe(6);
    expect(server.chatRequests()).toHaveLength(0);
    await expectSecondTurnAnswers(client, batchId);
  });
});
