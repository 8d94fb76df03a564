import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { finalAttempt, followToEnd } from '../helpers/sse-followers.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { API_KEYS_ENV, bearer, KEYS } from '../helpers/api-test-env.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';

const WORDS = 80;
const ANSWER = Array.from({ length: WORDS }, (_, index) => `word${index}`).join(' ');
const CLIENTS = 4;

/**
 * Token streams across a worker's crash: SSE clients follow a run whose model is writing its answer when
 * the worker is SIGKILLed; another worker runs the step again (a new attempt, a new `token-reset`), and
 * each client — one of them dropping its own connection during the crash and reconnecting with its last
 * event id — ends with the committed answer token by token, missing none and seeing none twice.
 */
describe('chaos: token streams when the worker is killed mid-answer', () => {
  const config = testConfig({ AGENTQ_API_KEYS: API_KEYS_ENV });
  const client = new AgentClient({ config });
  const workers: ChildProcess[] = [];
  let server: ScriptedOpenAIServer;
  let api: ApiInstance;
  let url: string;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ streamChunkDelayMs: 25 });
    api = await createApi({ config, client, logger: createLogger('silent') });
    url = await api.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await api?.close();
    await client.close();
    await server?.close();
  });

  it('every client ends with the last attempt whole: 0 clients missing tokens, one reconnecting across the crash', async () => {
    const env = workerEnv(config, {
      OPENAI_BASE_URL: server.url,
      LLM_MODEL: 'scripted-chat',
      AGENTQ_LOCK_DURATION_MS: '2000',
      AGENTQ_STALLED_INTERVAL_MS: '1000',
    });
    const tokenChannel = (runId: string) => client.store.keys.tokenChannel(runId);
    const followers = async (runId: string) =>
      Number(((await client.store.redis.call('PUBSUB', 'NUMSUB', tokenChannel(runId))) as [string, number])[1]);
    let runId = '';
    // The model writes only once the run is followed, so the first attempt's tokens reach the clients.
    server.setScript(async () => {
      await eventually(async () => runId !== '' && (await followers(runId)) >= 1, 30_000, 'a follower');
      return { content: ANSWER };
    });
    workers.push(await spawnWorker('test/chaos/chain-worker.ts', env));
    const created = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { ...bearer(KEYS.acmeProducer), 'content-type': 'application/json' },
      body: JSON.stringify({ graph: 'react-agent', input: { query: 'stream through a crash' } }),
    });
    expect(created.status).toBe(202);
    runId = ((await created.json()) as { id: string }).id;

    let crashed = () => undefined as void;
    const afterCrash = new Promise<void>((resolve) => (crashed = resolve));
    const follow = (dropAt?: number) =>
      followToEnd({
        url,
        runId: () => runId,
        headers: bearer(KEYS.acmeProducer),
        ...(dropAt === undefined ? {} : { dropAt, resumeAfter: afterCrash }),
      });
    const following = [follow(10), ...Array.from({ length: CLIENTS - 1 }, () => follow())];

    // Kill the worker while the model is half-way through its answer.
    await eventually(async () => (server.chatRequests()[0]?.chunkTimes?.length ?? 0) >= WORDS / 3, 30_000, 'tokens');
    await killHard(workers[0]!);
    workers.push(await spawnWorker('test/chaos/chain-worker.ts', env));
    crashed();

    const done = await client.wait(runId, { timeoutMs: 60_000 });
    expect(done.status).toBe('completed');
    const committed = (await client.messages(runId)).at(-1);
    expect(committed).toMatchObject({ role: 'assistant', content: ANSWER });
    // The step ran again after the crash: the model was asked twice.
    expect(server.chatRequests().length).toBeGreaterThanOrEqual(2);

    const ends = await Promise.all(following);
    const outcomes = ends.map(({ frames }) => finalAttempt(frames));
    const missing = outcomes.filter((outcome) => !outcome.whole || outcome.text !== committed?.content);
    recordFigure({
      scenario: 'token streams, worker killed',
      name: 'clients_missing_tokens',
      value: missing.length,
      goal: '= 0',
    });
    expect(missing).toHaveLength(0);
    // Each client saw the first attempt begin and the second one begin after the crash.
    expect(outcomes.map((outcome) => outcome.resets >= 2)).toEqual(ends.map(() => true));
    expect(ends[0]!.reconnects).toBeGreaterThanOrEqual(1);
    expect(outcomes.some((outcome) => outcome.gap)).toBe(false);
  }, 120_000);
});
