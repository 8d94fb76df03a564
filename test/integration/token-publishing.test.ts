import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenFeed, type TokenFeedEvent } from '../../producer/client/token-feed.js';
import { TokenHub } from '../../producer/client/token-hub.js';
import type { TokenEvent } from '../../shared/contracts/token-event.js';
import { connectRedis } from '../../shared/redis/connect-redis.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { startCountedRedis, type CountedRedis } from '../helpers/counted-redis.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

const ANSWER = 'One two three four five six seven eight nine ten eleven twelve.';

/**
 * A worker publishes a model's live text only while someone follows the run: a run nobody follows sends
 * no token over Redis at all, and a follower who arrives while an answer streams still gets that answer's
 * text from its start (the worker held it, and looks for followers again while it streams).
 */
describe('token publishing follows the followers', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let hub: TokenHub;
  let redis: CountedRedis;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    redis = await startCountedRedis();
    env = await startTestEnv({
      env: { REDIS_URL: redis.url, OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' },
    });
    hub = new TokenHub(env.client.store.keys, () => connectRedis(env.config, 'subscriber'));
  });
  afterAll(async () => {
    hub?.close();
    await env?.close();
    await server?.close();
    await redis?.stop();
  });

  /** PUBLISH commands Redis has run, scripts' own included (this file's private Redis: no other test's). */
  const publishes = () => redis.calls('publish');

  it('a run nobody follows publishes none of its tokens', async () => {
    server.setScript([{ content: ANSWER, chunkDelayMs: 5 }]);
    const before = await publishes();
    const runId = (await env.client.enqueue({ graph: 'react-agent', input: { query: 'nobody listens' } })).id;
    const done = await env.client.wait(runId, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    expect((await env.client.messages(runId)).at(-1)).toMatchObject({ role: 'assistant', content: ANSWER });
    expect((await publishes()) - before).toBe(0);
    expect(await redis.redis.exists(env.client.store.keys.tokenLog(runId))).toBe(0);
  });

  it('a follower who arrives while the answer streams gets token-reset, then the whole answer from its start', async () => {
    // Twelve words, 150 ms apart: the follower joins after the first words have streamed.
    server.setScript([{ content: ANSWER, chunkDelayMs: 150 }]);
    const runId = (await env.client.enqueue({ graph: 'react-agent', input: { query: 'join me late' } })).id;
    await eventually(async () => server.chatRequests().length >= 1, 30_000, 'the model request');
    await new Promise((resolve) => setTimeout(resolve, 400));
    const got: TokenFeedEvent[] = [];
    const feed = await TokenFeed.open({
      hub,
      log: env.client.store.tokenLog,
      runId,
      after: null,
      deliver: (event) => got.push(event),
    });
    try {
      await feed.start();
      const done = await env.client.wait(runId, { timeoutMs: 30_000 });
      expect(done.status).toBe('completed');
      await eventually(
        async () => got.filter((event) => event.type === 'token').length >= 12,
        10_000,
        'the answer text',
      );
      expect(got[0]).toMatchObject({ type: 'token-reset', runId, step: 0, attempt: 1 });
      const text = got.filter((event) => event.type === 'token').map((event) => event as TokenEvent);
      expect(text.map((event) => event.index)).toEqual(text.map((_, index) => index));
      expect(text.map((event) => event.text).join('')).toBe(ANSWER);
    } finally {
      feed.close();
    }
  });
});
