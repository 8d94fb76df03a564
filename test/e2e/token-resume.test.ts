import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { followRun, type RunStreamEvent } from '../../producer/client/follow-run.js';
import { TokenHub } from '../../producer/client/token-hub.js';
import type { TokenEvent } from '../../shared/contracts/token-event.js';
import { connectRedis } from '../../shared/redis/connect-redis.js';
import { createRedis } from '../../shared/redis/create-redis.js';
import { Keys } from '../../shared/store/keys.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { readSse, type SseFrame } from '../helpers/api-sse.js';
import { API_KEYS_ENV, bearer, KEYS } from '../helpers/api-test-env.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const WORDS = 60;
const ANSWER = Array.from({ length: WORDS }, (_, index) => `word${index}`).join(' ');

/**
 * Token streams that resume: a follower that lost its connection mid-answer gets, on reconnecting with
 * its last event id, every token it missed from the run's token log, then the live ones — each once.
 */
describe('token streams that resume', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let api: ApiInstance;
  let url: string;
  let keys: Keys;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ streamChunkDelayMs: 15 });
    env = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', AGENTQ_API_KEYS: API_KEYS_ENV },
    });
    keys = new Keys(env.config.keyPrefix);
    api = await createApi({ config: env.config, client: env.client, logger: createLogger('silent') });
    url = await api.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await api?.close();
    await env?.close();
    await server?.close();
  });
  beforeEach(() => server.reset());

  const start = async () => {
    const response = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { ...bearer(KEYS.acmeProducer), 'content-type': 'application/json' },
      body: JSON.stringify({ graph: 'react-agent', input: { query: 'stream please' } }),
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };
  const subscribers = async (runId: string) =>
    Number(((await env.client.store.redis.call('PUBSUB', 'NUMSUB', keys.tokenChannel(runId))) as [string, number])[1]);
  /** The model answers once someone follows the run, so no test races the stream on a busy machine. */
  const answerWhenFollowed = (runId: string) => {
    let open = () => undefined as void;
    const followed = new Promise<void>((resolve) => (open = resolve));
    server.setScript(async () => {
      await followed;
      return { content: ANSWER };
    });
    void eventually(async () => (await subscribers(runId)) >= 1, 30_000, 'a follower').then(open, open);
  };
  /** Chunks the model server has written so far for the run's one model call. */
  const chunksSent = () => server.chatRequests()[0]?.chunkTimes?.length ?? 0;
  /** The position a client reconnects with: the id of the last frame it got that had one. */
  const lastId = (frames: SseFrame[]) => frames.filter((frame) => frame.id !== undefined).at(-1)?.id ?? '0-0';
  const tokensOf = (frames: SseFrame[]) =>
    frames.filter((frame) => frame.event === 'token').map((frame) => JSON.parse(frame.data!) as TokenEvent);
  /** Reads until `count` more tokens came, then drops the connection; → the frames the client got. */
  const readTokensThenDrop = async (runId: string, count: number, query = '', headers: Record<string, string> = {}) => {
    const dropping = new AbortController();
    const response = await fetch(`${url}/v1/runs/${runId}/events${query}`, {
      headers: { ...bearer(KEYS.acmeProducer), ...headers },
      signal: dropping.signal,
    });
    expect(response.status).toBe(200);
    const frames = await readSse(response.body!, (read) => tokensOf(read).length >= count);
    dropping.abort();
    return frames;
  };

  it('an SSE client that drops mid-answer and reconnects with Last-Event-ID (header, then ?lastEventId=) gets every token once, in order', async () => {
    const runId = await start();
    answerWhenFollowed(runId);
    const first = await readTokensThenDrop(runId, 5);
    // Tokens go on while the client is away.
    await eventually(async () => chunksSent() >= 20, 30_000, 'more tokens while the client is away');
    const second = await readTokensThenDrop(runId, 5, '', { 'last-event-id': lastId(first) });
    await eventually(async () => chunksSent() >= 40, 30_000, 'more tokens while the client is away again');
    // A client that cannot set headers passes the same position as a parameter.
    const response = await fetch(`${url}/v1/runs/${runId}/events?lastEventId=${encodeURIComponent(lastId(second))}`, {
      headers: bearer(KEYS.acmeProducer),
    });
    const third = await readSse(response.body!);
    expect(third.at(-1)?.event).toBe('run-end');

    const tokens = [...tokensOf(first), ...tokensOf(second), ...tokensOf(third)];
    expect(tokens.map((token) => token.index)).toEqual(tokens.map((_, index) => index));
    const committed = (await env.client.messages(runId)).at(-1);
    expect(committed).toMatchObject({ role: 'assistant', content: ANSWER });
    expect(tokens.map((token) => token.text).join('')).toBe(committed?.content);
    // Every frame of a stream carries the position after it; committed events come once across the three.
    const all = [...first, ...second, ...third];
    expect(all.filter((frame) => frame.event !== 'token-reset').every((frame) => frame.id !== undefined)).toBe(true);
    const committedIds = all
      .filter((frame) => frame.event?.startsWith('run-') || frame.event?.startsWith('step-'))
      .map((frame) => frame.id!.split('_')[0]);
    expect(new Set(committedIds).size).toBe(committedIds.length);
    expect(all.some((frame) => frame.event === 'token-gap')).toBe(false);
  });

  it('the client library resumes by itself when Redis drops its pub/sub connection mid-answer: every token once', async () => {
    // A connection whose Redis client id the test knows, to drop exactly it.
    const subscriber = createRedis(env.config.redisUrl, 'subscriber');
    const subscriberId = Number(await subscriber.client('ID'));
    const hub = new TokenHub(keys, () => subscriber);
    const reader = connectRedis(env.config, 'blocking');
    try {
      const runId = await start();
      answerWhenFollowed(runId);
      const seen: RunStreamEvent[] = [];
      let dropped = false;
      for await (const event of followRun({ store: env.client.store, events: { reader }, tokens: hub, runId })) {
        seen.push(event);
        if (!dropped && seen.filter((each) => each.type === 'token').length === 5) {
          dropped = true;
          await env.client.store.redis.call('CLIENT', 'KILL', 'ID', String(subscriberId));
        }
      }
      expect(dropped).toBe(true);
      expect(seen.at(-1)?.type).toBe('run-end');
      const tokens = seen.filter((event): event is TokenEvent => event.type === 'token');
      expect(tokens.map((token) => token.index)).toEqual(tokens.map((_, index) => index));
      expect(tokens.map((token) => token.text).join('')).toBe(ANSWER);
      expect(seen.some((event) => event.type === 'token-gap')).toBe(false);
    } finally {
      hub.close();
      reader.disconnect();
    }
  });

  it('a run nobody follows keeps no token log: its tokens cost no durable write', async () => {
    server.setScript([{ content: ANSWER, chunkDelayMs: 0 }]);
    const runId = await start();
    await env.client.wait(runId, { timeoutMs: 30_000 });
    expect((await env.client.messages(runId)).at(-1)).toMatchObject({ content: ANSWER });
    expect(await env.client.store.redis.exists(keys.tokenLog(runId))).toBe(0);
  });
});
