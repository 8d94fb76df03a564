import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { startScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';
import { expectSecondTurnAnswers, providerBatchWorkerEnv } from './provider-batch-chaos.js';

/** Every point of a provider batch's life where a worker may die: after the provider call, before it is recorded. */
const POINTS = ['intent', 'uploaded', 'created', 'polled', 'downloaded', 'applied', 'marked'] as const;

/**
 * Paid work at most once through the provider's Batch API, with real crashes: the worker that collects is SIGKILLed at
 * each point of a provider batch's life; a second worker takes the collector's lease over and resumes. No
 * provider batch is created twice, no file uploaded twice, no request sent twice, every run is answered.
 */
describe('chaos: the collecting worker killed at each point of a provider batch', () => {
  const workers: ChildProcess[] = [];
  const serverStarting = startScriptedOpenAIServer({
    script: (request) => ({ content: `re: ${(request.body.messages as { content: string }[]).at(-1)?.content}` }),
    batchApi: { processingMs: 300 },
  });
  const clients: AgentClient[] = [];
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await Promise.all(clients.map((client) => client.close()));
    await (await serverStarting).close();
  });

  it.each(POINTS)('killed at %s: one provider batch per turn, each request once, every run answered', async (point) => {
    const server = await serverStarting;
    const config = testConfig({ OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' });
    const client = new AgentClient({ config });
    clients.push(client);
    // Short timeouts and job locks, so the survivor takes over soon.
    const env = providerBatchWorkerEnv(config, server.url);
    const batchesBefore = server.batchApi!.batches.length;
    const filesBefore = server.batchApi!.files.filter((file) => file.purpose === 'batch').length;
    const killer = await spawnWorker('test/chaos/provider-batch-kill-worker.ts', { ...env, KILL_AT_POINT: point });
    workers.push(killer);
    const died = new Promise<void>((resolve) => killer.once('exit', () => resolve()));
    const { batch } = await client.batches.submit({
      questions: ['a', 'b', 'c'].map((question) => ({ question: `${point} ${question}` })),
      options: { graph: 'two-turns' },
      providerBatch: true,
    });
    await died;
    expect(killer.signalCode).toBe('SIGKILL');
    workers.push(await spawnWorker('test/chaos/provider-batch-kill-worker.ts', env));
    const done = await eventually(
      async () => {
        const record = await client.batches.get(batch.id);
        return record?.status === 'completed' && record;
      },
      60_000,
      `batch killed at ${point} to complete`,
    );
    expect(done.progress).toMatchObject({ total: 3, completed: 3, failed: 0 });
    const created = server.batchApi!.batches.slice(batchesBefore);
    // One provider batch per turn: never a second one for the same flush.
    expect(created.map((entry) => entry.metadata.agentq_flush)).toEqual([`${batch.id}.f1`, `${batch.id}.f2`]);
    expect(server.batchApi!.files.filter((file) => file.purpose === 'batch').length - filesBefore).toBe(2);
    const sent = created.flatMap((entry) => entry.lines.map((line) => line.custom_id));
    expect(new Set(sent).size).toBe(6);
    expect(server.chatRequests()).toHaveLength(0);
    await expectSecondTurnAnswers(client, batch.id);
    await Promise.all(workers.splice(0).map((worker) => killHard(worker)));
  });
});
