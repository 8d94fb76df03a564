import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';

const RUNS = 4;

/**
 * A paused worker's late save. Worker A takes every run and is stopped (SIGSTOP) with its model calls in
 * flight; worker B takes the steps over once A's liveness lapses, pays again, and completes the runs,
 * whose keys then expire (retention 1 s). A is let go (SIGCONT) and its model answers arrive: its saves
 * and whatever follows them must not bring any of the finished runs' keys back, least of all without a TTL.
 */
describe('chaos: a paused worker saves late', () => {
  const workers: ChildProcess[] = [];
  let client: AgentClient | undefined;
  let server: ScriptedOpenAIServer | undefined;
  let redis: Redis | undefined;
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => killHard(worker)));
    await client?.close();
    await server?.close();
    redis?.disconnect();
  });

  it('after the runs finished and expired, the late saves leave no key of theirs without a TTL', async () => {
    const config = testConfig({ AGENTQ_RETENTION_SECONDS: '1' });
    client = new AgentClient({ config });
    redis = new Redis(config.redisUrl!);
    let pausedPid = -1;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    // The paused worker's requests are answered only after it is let go, so the answers reach a process
    // that runs (not a socket buffer read together with a timer that fired during the pause).
    server = await startScriptedOpenAIServer({
      script: async (request) => {
        if (JSON.stringify(request.body).includes(`(pid ${pausedPid})`)) await released;
        return { content: 'paid', usage: { prompt_tokens: 50, completion_tokens: 5 } };
      },
    });
    const env = workerEnv(config, {
      AGENTQ_LOCK_DURATION_MS: '2000',
      AGENTQ_STALLED_INTERVAL_MS: '1000',
      AGENTQ_RETENTION_SECONDS: '1',
      AGENTQ_LOG_LEVEL: 'debug',
      OPENAI_BASE_URL: server.url,
      LLM_MODEL: 'scripted-chat',
    });
    const logs: string[] = [];
    const paused = await spawnWorker('test/chaos/paid-claim-worker.ts', env, {
      onStderr: (text) => logs.push(text),
    });
    workers.push(paused);
    pausedPid = paused.pid!;
    const runs = await Promise.all(
      Array.from({ length: RUNS }, () => client!.enqueue({ graph: 'paid-claim', input: null })),
    );
    const ids = runs.map((run) => run.id);
    await eventually(async () => server!.chatRequests().length >= RUNS, 30_000, 'the paused worker’s model requests');
    paused.kill('SIGSTOP');
    workers.push(await spawnWorker('test/chaos/paid-claim-worker.ts', env));
    for (const id of ids) expect(await client.wait(id, { timeoutMs: 60_000 })).toMatchObject({ status: 'completed' });
    // Retention: the finished runs' keys are gone.
    await eventually(
      async () => (await runKeysOf(redis!, config.keyPrefix, ids)).length === 0,
      20_000,
      'the finished runs’ keys to expire',
    );
    paused.kill('SIGCONT');
    release();
    await eventually(
      async () => server!.chatRequests().filter((request) => request.outcome === 'pending').length === 0,
      30_000,
      'the paused worker’s model answers',
    );
    // Settled: each late step of the paused worker has reached its commit (logged at debug), refused or not.
    await eventually(
      async () => (logs.join('').match(/"msg":"step committed/g) ?? []).length >= RUNS,
      30_000,
      'the paused worker’s late steps to end',
    );
    const left = await runKeysOf(redis, config.keyPrefix, ids);
    const withoutTtl: string[] = [];
    for (const key of left) if ((await redis.ttl(key)) === -1) withoutTtl.push(key);
    recordFigure({
      scenario: 'late saves',
      name: 'finished_run_keys_without_ttl',
      value: withoutTtl.length,
      goal: '= 0',
    });
    expect(withoutTtl).toEqual([]);
  }, 180_000);
});

/** Every key of agentq's under `prefix` that names one of `ids`. */
async function runKeysOf(redis: Redis, prefix: string, ids: string[]): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) if (ids.some((id) => key.includes(id))) found.push(key);
  } while (cursor !== '0');
  return found;
}
