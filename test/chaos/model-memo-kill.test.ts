import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { startScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker } from '../helpers/worker-processes.js';

/**
 * No paid work twice, with a real crash: a worker process is SIGKILLed after the model's response was saved
 * but before the step committed; the worker that takes the step over must not call the model again.
 */
describe('chaos: worker killed after the model response was saved', () => {
  const workers: ChildProcess[] = [];
  const config = testConfig({ AGENTQ_LOCK_DURATION_MS: '2000', AGENTQ_STALLED_INTERVAL_MS: '1000' });
  const client = new AgentClient({ config });
  const serverStarting = startScriptedOpenAIServer({
    script: () => ({ content: 'paid once', usage: { prompt_tokens: 77, completion_tokens: 7 } }),
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await client.close();
    await (await serverStarting).close();
  });

  it('the re-delivered step uses the saved response: one request in all, usage counted once', async () => {
    const server = await serverStarting;
    const env: Record<string, string> = {
      REDIS_URL: config.redisUrl!,
      AGENTQ_KEY_PREFIX: config.keyPrefix,
      AGENTQ_QUEUE_PREFIX: config.queuePrefix,
      AGENTQ_LOCK_DURATION_MS: '2000',
      AGENTQ_STALLED_INTERVAL_MS: '1000',
      AGENTQ_LOG_LEVEL: 'error',
      OPENAI_BASE_URL: server.url,
      LLM_MODEL: 'scripted-chat',
      AGENTQ_PRICES: 'scripted-chat:10:20',
    };
    const first = await spawnWorker('test/chaos/model-memo-worker.ts', env);
    workers.push(first);
    const queued = await client.enqueue({ graph: 'paid-call', input: null });
    const memoKey = client.store.keys.run(queued.id).memo;
    // The response is saved (memo written) while the node still waits: kill now.
    await eventually(
      async () => (await client.store.redis.hexists(memoKey, 's0.t0')) === 1,
      20_000,
      'the saved model response',
    );
    expect(server.chatRequests()).toHaveLength(1);
    await killHard(first);

    workers.push(await spawnWorker('test/chaos/model-memo-worker.ts', env));
    const done = await client.wait(queued.id, { timeoutMs: 45_000 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'paid once' } });
    expect(server.chatRequests()).toHaveLength(1);
    expect(done.usage).toEqual({
      inputTokens: 77,
      outputTokens: 7,
      costUsd: expect.closeTo((77 * 10 + 7 * 20) / 1e6, 12),
      // Nothing was read from a prompt cache: the uncached cost is the cost.
      uncachedCostUsd: expect.closeTo((77 * 10 + 7 * 20) / 1e6, 12),
    });
    const steps = await client.steps(queued.id);
    expect(steps).toHaveLength(1);
    expect(steps[0]?.usage).toMatchObject({ inputTokens: 77, outputTokens: 7 });
  }, 90_000);
});
