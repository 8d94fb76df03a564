import { afterAll, beforeAll, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { redisNodes } from '../../shared/redis/connect-redis.js';
import type { TokenEvent } from '../../shared/contracts/token-event.js';
import { startWorker, type AgentWorker } from '../../worker/start-worker.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { readSse } from '../helpers/api-sse.js';
import { API_KEYS_ENV, bearer, KEYS } from '../helpers/api-test-env.js';
import { clusterTestConfig } from '../helpers/redis-cluster.js';
import { describeOnCluster } from '../helpers/describe-on-cluster.js';
import { eventually } from '../helpers/test-env.js';

const ANSWER = 'Streaming tokens arrive one word at a time until the answer is whole.';

/**
 * Live model tokens on a Cluster: sharded pub/sub — the worker SPUBLISHes on the run's token channel
 * (routed to the master of its slot), the API's TokenHub SSUBSCRIBEs there, and the SSE client gets the
 * text live and in order, as on one Redis. (With PUBLISH through whichever node ioredis picked, words
 * arrived swapped.)
 */
describeOnCluster('token streaming on a real Redis Cluster', (cluster) => {
  let server: ScriptedOpenAIServer;
  let worker: AgentWorker;
  let client: AgentClient;
  let api: ApiInstance;
  let url: string;

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ streamChunkDelayMs: 20 });
    const config = clusterTestConfig(cluster, {
      OPENAI_BASE_URL: server.url,
      LLM_MODEL: 'scripted-chat',
      AGENTQ_API_KEYS: API_KEYS_ENV,
      AGENTQ_SHARDS: '3',
      AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '5000',
    });
    worker = await startWorker({ config, logger: createLogger(config.logLevel), reconciler: false });
    client = new AgentClient({ config });
    api = await createApi({ config, client, logger: createLogger(config.logLevel) });
    url = await api.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await worker?.close();
    await server?.close();
  });

  it('SSE sends the model text live as token events that add up to the committed message', async () => {
    // The model answers once someone listens to the run's tokens, so the test never races the stream.
    let listening = () => undefined as void;
    const ready = new Promise<void>((resolve) => (listening = resolve));
    server.setScript(async () => {
      await ready;
      return { content: ANSWER };
    });
    const created = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { ...bearer(KEYS.acmeProducer), 'content-type': 'application/json' },
      body: JSON.stringify({ graph: 'react-agent', input: { query: 'stream please' } }),
    });
    const { id } = (await created.json()) as { id: string };
    // Sharded pub/sub: the channel's subscribers are counted by PUBSUB SHARDNUMSUB on its node; ask every master.
    const channel = client.store.keys.tokenChannel(id);
    void eventually(
      async () => {
        let count = 0;
        for (const node of await redisNodes(client.store.redis))
          count += Number(((await node.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number])[1]);
        return count >= 1;
      },
      30_000,
      'a token subscriber',
    ).then(listening, listening);
    const response = await fetch(`${url}/v1/runs/${id}/events`, { headers: bearer(KEYS.acmeProducer) });
    const frames = await readSse(response.body!);
    expect(frames.at(-1)?.event).toBe('run-end');
    const text = frames
      .filter((frame) => frame.event === 'token')
      .map((frame) => JSON.parse(frame.data!) as TokenEvent);
    expect(text.length).toBeGreaterThan(5);
    // In the order they were published: each token's index is its place.
    expect(text.map((event) => (event.type === 'token' ? event.index : -1))).toEqual(
      text.map((_event, index) => index),
    );
    expect(text.map((event) => (event.type === 'token' ? event.text : '')).join('')).toBe(ANSWER);
    expect((await client.messages(id)).at(-1)).toMatchObject({ role: 'assistant', content: ANSWER });
  });
});
