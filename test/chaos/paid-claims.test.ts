import type { ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';

/**
 * Paid work at most once at any load. A stalled worker (event loop blocked longer than its job
 * lock) keeps its job — its liveness thread renews the lock — and its claim on the model call it has in
 * flight. A killed worker's lock and claim lapse, and the call is made again, once.
 */
describe('chaos: claims on paid work', () => {
  const workers: ChildProcess[] = [];
  let client: AgentClient | undefined;
  let server: ScriptedOpenAIServer | undefined;
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => killHard(worker)));
    await client?.close();
    await server?.close();
  });

  async function setUp(responseDelayMs: number) {
    const config = testConfig();
    client = new AgentClient({ config });
    server = await startScriptedOpenAIServer({
      script: () => ({
        content: 'paid once',
        delayMs: responseDelayMs,
        usage: { prompt_tokens: 50, completion_tokens: 5 },
      }),
    });
    const env = workerEnv(config, {
      AGENTQ_LOCK_DURATION_MS: '2000',
      AGENTQ_STALLED_INTERVAL_MS: '1000',
      OPENAI_BASE_URL: server.url,
      LLM_MODEL: 'scripted-chat',
    });
    return { env, server, client };
  }

  it('a worker whose event loop is blocked past its lock keeps its job and its claim: one delivery, one model request', async () => {
    const { env, server, client } = await setUp(1500);
    // The first worker takes the run alone, then stalls for 7 s with its request in flight.
    workers.push(await spawnWorker('test/chaos/paid-claim-worker.ts', { ...env, BLOCK_EVENT_LOOP_MS: '7000' }));
    const run = await client.enqueue({ graph: 'paid-claim', input: null });
    await eventually(async () => server.chatRequests().length > 0, 20_000, 'the first model request');
    // A second worker, free: it finds the stalled job (lock expired) and runs the step again.
    workers.push(await spawnWorker('test/chaos/paid-claim-worker.ts', env));
    const done = await client.wait(run.id, { timeoutMs: 60_000 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'paid once' } });
    expect(server.chatRequests()).toHaveLength(1);
    const events = await client.store.eventLog.events(run.id);
    // The liveness thread renewed the stalled worker's lock: the step was never handed to the other
    // worker (whose free slots and 1 s stall checks would have taken it). Claims cover what gets past
    // that (a lock lost to a Redis stall, a stale duplicate): test/integration/paid-claims.test.ts.
    expect(events.filter((event) => event.type === 'step-start')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'step-end')).toHaveLength(1);
    recordFigure({
      scenario: 'paid claims',
      name: 'blocked_loop_model_requests',
      value: server.chatRequests().length,
      goal: '= 1',
    });
  }, 90_000);

  it('a worker killed with its model call in flight: the call is made again once, by the worker that takes over', async () => {
    const { env, server, client } = await setUp(8000);
    // Both workers up first; the one whose request reaches the model server is killed while it waits.
    workers.push(
      await spawnWorker('test/chaos/paid-claim-worker.ts', env),
      await spawnWorker('test/chaos/paid-claim-worker.ts', env),
    );
    const run = await client.enqueue({ graph: 'paid-claim', input: null });
    await eventually(async () => server.chatRequests().length > 0, 20_000, 'the first model request');
    const pid = Number(/pid (\d+)/.exec(JSON.stringify(server.chatRequests()[0]!.body))?.[1]);
    const first = workers.find((worker) => worker.pid === pid)!;
    expect(first).toBeDefined();
    const killedAt = Date.now();
    await killHard(first);
    const done = await client.wait(run.id, { timeoutMs: 60_000 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'paid once' } });
    expect(server.chatRequests()).toHaveLength(2);
    recordFigure({
      scenario: 'paid claims',
      name: 'killed_in_call_model_requests',
      value: server.chatRequests().length,
      goal: '= 2 (the crash came before the save)',
    });
    recordFigure({
      scenario: 'paid claims',
      name: 'killed_in_call_completed_after_s',
      value: Number(((Date.now() - killedAt) / 1000).toFixed(1)),
      goal: 'lock 2 s + stall check 1 s + response 8 s',
    });
  }, 90_000);
});
