import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import { sleep } from '../../shared/contracts/abort.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { API_KEYS_ENV, bearer, KEYS } from '../helpers/api-test-env.js';
import { finalAttempt, followToEnd } from '../helpers/sse-followers.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';
import { startRestartableRedis, type RestartableRedis } from './redis-restartable.js';

const WORDS = 80;
const ANSWER = Array.from({ length: WORDS }, (_, index) => `word${index}`).join(' ');
const CLIENTS = 4;

/**
 * Token streams across a Redis crash: SSE clients follow a run whose model is writing its answer when
 * Redis (AOF, everysec) is SIGKILLed and started again. Tokens written while Redis was down cannot be in
 * its log; what a client must never do is end with a partial answer it was not told about: each ends
 * with the last attempt whole, or was sent `token-gap` (drop the partial text, read the committed answer).
 */
describe('chaos: token streams when Redis is killed mid-answer', () => {
  const workers: ChildProcess[] = [];
  let redis: RestartableRedis | undefined;
  let client: AgentClient | undefined;
  let server: ScriptedOpenAIServer | undefined;
  let api: ApiInstance | undefined;
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await api?.close();
    await client?.close();
    await server?.close();
    await redis?.close();
  });

  it('0 clients silently missing tokens: each ends whole or told of the gap, and with the committed answer', async () => {
    redis = await startRestartableRedis();
    const config = testConfig({ REDIS_URL: redis.url, AGENTQ_API_KEYS: API_KEYS_ENV });
    client = new AgentClient({ config });
    server = await startScriptedOpenAIServer({ streamChunkDelayMs: 25 });
    api = await createApi({ config, client, logger: createLogger('silent') });
    const url = await api.listen({ port: 0, host: '127.0.0.1' });
    const store = client.store;
    let runId = '';
    server.setScript(async () => {
      await eventually(
        async () =>
          runId !== '' &&
          Number(
            ((await store.redis.call('PUBSUB', 'NUMSUB', store.keys.tokenChannel(runId))) as [string, number])[1],
          ) >= 1,
        30_000,
        'a follower',
      );
      return { content: ANSWER };
    });
    workers.push(
      await spawnWorker(
        'test/chaos/chain-worker.ts',
        workerEnv(config, { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' }),
      ),
    );
    const created = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { ...bearer(KEYS.acmeProducer), 'content-type': 'application/json' },
      body: JSON.stringify({ graph: 'react-agent', input: { query: 'stream through an outage' } }),
    });
    expect(created.status).toBe(202);
    runId = ((await created.json()) as { id: string }).id;
    const following = Array.from({ length: CLIENTS }, () =>
      followToEnd({ url, runId: () => runId, headers: bearer(KEYS.acmeProducer) }),
    );

    await eventually(async () => (server!.chatRequests()[0]?.chunkTimes?.length ?? 0) >= WORDS / 3, 30_000, 'tokens');
    await redis.kill();
    await sleep(1000);
    await redis.start();

    const done = await eventually(
      async () => client!.wait(runId, { timeoutMs: 60_000 }).catch(() => undefined),
      90_000,
      'the run to end',
    );
    expect(done.status).toBe('completed');
    const committed = (await client.messages(runId)).at(-1);
    expect(committed).toMatchObject({ role: 'assistant', content: ANSWER });

    const outcomes = (await Promise.all(following)).map(({ frames }) => finalAttempt(frames));
    const silent = outcomes.filter(
      (outcome) => !outcome.gap && (!outcome.whole || outcome.text !== committed?.content),
    );
    recordFigure({
      scenario: 'token streams, Redis killed',
      name: 'clients_missing_tokens',
      value: silent.length,
      goal: '= 0',
    });
    recordFigure({
      scenario: 'token streams, Redis killed',
      name: 'clients_told_of_a_gap',
      value: outcomes.filter((o) => o.gap).length,
    });
    expect(silent).toHaveLength(0);
  }, 180_000);
});
