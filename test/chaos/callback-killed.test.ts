import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import type { ApiInstance } from '../../producer/api/create-api.js';
import { createTestApi } from '../helpers/api-test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';

const WORKER = 'test/chaos/callback-worker.ts';
const SECRET = 'callback-chaos-secret-0123456789abcdefgh';

/**
 * A callback URL survives the crash of the worker that handed it out: the worker is SIGKILLed after its
 * step handed the URL out and before it parked; the step run again on a new worker hands out the same
 * URL, and one POST to it (no API key) completes the run once.
 */
describe('chaos: the worker killed after its step handed out a callback URL', () => {
  const workers: ChildProcess[] = [];
  const dir = tempDirectory('agentq-callback-');
  const config = testConfig({ AGENTQ_CALLBACK_SECRET: SECRET });
  const client = new AgentClient({ config });
  let app: ApiInstance | undefined;
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await app?.close();
    await client.close();
    dir.remove();
  });

  it('kill -9 before parking: the new worker hands out the same URL, and the callback works once', async () => {
    app = await createTestApi({
      AGENTQ_CALLBACK_SECRET: SECRET,
      REDIS_URL: config.redisUrl!,
      AGENTQ_KEY_PREFIX: config.keyPrefix,
      AGENTQ_QUEUE_PREFIX: config.queuePrefix,
    });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const env = workerEnv(config, {
      AGENTQ_CALLBACK_SECRET: SECRET,
      AGENTQ_PUBLIC_URL: base,
      AGENTQ_LOCK_DURATION_MS: '2000',
      AGENTQ_STALLED_INTERVAL_MS: '1000',
    });
    const urlFile = join(dir.path, 'urls.txt');
    const first = await spawnWorker(WORKER, env);
    workers.push(first);
    const queued = await client.enqueue({
      graph: 'callbacker',
      input: { timeoutMs: 120_000, urlFile, hangFirst: true },
    });
    const lines = () => (existsSync(urlFile) ? readFileSync(urlFile, 'utf8').trim().split('\n') : []);
    await eventually(async () => lines().length === 1, 20_000);
    await killHard(first);
    expect(first.signalCode).toBe('SIGKILL');

    workers.push(await spawnWorker(WORKER, env));
    await eventually(
      async () => (await client.store.eventLog.events(queued.id)).some((event) => event.type === 'step-parked'),
      30_000,
    );
    const [handedOut, again] = lines();
    expect(again).toBe(handedOut);
    expect(handedOut!.startsWith(`${base}/v1/callbacks/`)).toBe(true);

    const post = (body: unknown) =>
      fetch(handedOut!, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post({ n: 1 })).status).toBe(202);
    const done = await client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done.output).toEqual({ body: { n: 1 } });
    expect((await post({ n: 2 })).status).toBe(409);
    const ends = (await client.store.eventLog.events(queued.id)).filter((event) => event.type === 'step-end');
    expect(ends).toHaveLength(1);
  });
});
