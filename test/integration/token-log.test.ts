import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenFeed, type TokenFeedEvent } from '../../producer/client/token-feed.js';
import { TokenHub } from '../../producer/client/token-hub.js';
import type { TokenEvent } from '../../shared/contracts/token-event.js';
import { connectRedis, type RedisConnection } from '../../shared/redis/connect-redis.js';
import { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { Config } from '../../shared/config/config.js';
import { eventually, testConfig } from '../helpers/test-env.js';

/**
 * The run's token log against a real Redis: kept only once followed, capped and expiring, and a follower
 * that comes back after the cap or the expiry took its missed tokens is told so (`token-gap`) rather
 * than handed a silent hole.
 */
describe('token log', () => {
  const CAP = 10;
  let config: Config;
  let redis: RedisConnection;
  let store: RedisRunStore;
  let hub: TokenHub;
  beforeAll(async () => {
    config = testConfig();
    redis = connectRedis(config, 'worker');
    store = new RedisRunStore(redis, { keyPrefix: config.keyPrefix, tokenLog: { maxLen: CAP, ttlMs: 60_000 } });
    hub = new TokenHub(store.keys, () => connectRedis(config, 'subscriber'));
  });
  afterAll(() => {
    hub?.close();
    redis?.disconnect();
  });

  const token = (runId: string, index: number): TokenEvent => ({
    type: 'token',
    runId,
    step: 0,
    task: 0,
    node: 'model',
    attempt: 1,
    call: 'model',
    index,
    text: `w${index} `,
  });
  const follow = async (runId: string, after: string | null) => {
    const got: TokenFeedEvent[] = [];
    const feed = await TokenFeed.open({ hub, log: store.tokenLog, runId, after, deliver: (event) => got.push(event) });
    await feed.start();
    return { feed, got };
  };
  const indexes = (events: TokenFeedEvent[]) => events.map((event) => (event.type === 'token' ? event.index : -1));

  it('a run nobody follows keeps nothing: the token is only published', async () => {
    const runId = 'unfollowed';
    expect(await store.tokenLog.append(token(runId, 0))).toBeNull();
    expect(await redis.exists(store.keys.tokenLog(runId))).toBe(0);
  });

  it('a follower back after the cap trimmed its missed tokens gets token-gap, then the kept tail in order', async () => {
    const runId = 'capped';
    const first = await follow(runId, null);
    for (let index = 0; index < 3; index += 1) await store.tokenLog.append(token(runId, index));
    await eventually(async () => first.got.length === 3, 10_000, 'the live tokens');
    const position = first.feed.position;
    first.feed.close();
    // Far past the cap while away (MAXLEN ~ trims whole blocks of about 100).
    for (let index = 3; index < 400; index += 1) await store.tokenLog.append(token(runId, index));
    expect(await redis.xlen(store.keys.tokenLog(runId))).toBeLessThan(400);

    const back = await follow(runId, position);
    back.feed.close();
    expect(back.got[0]).toEqual({ type: 'token-gap', runId, after: position });
    const tail = indexes(back.got.slice(1));
    expect(tail.at(-1)).toBe(399);
    expect(tail).toEqual(tail.map((_, offset) => tail[0]! + offset));
    expect(tail[0]).toBeGreaterThan(3);

    // Within the cap, nothing is missing and nothing says so.
    const position2 = back.feed.position;
    for (let index = 400; index < 405; index += 1) await store.tokenLog.append(token(runId, index));
    const again = await follow(runId, position2);
    again.feed.close();
    expect(indexes(again.got)).toEqual([400, 401, 402, 403, 404]);
  });

  it('a follower back after the log expired gets token-gap', async () => {
    const runId = 'expired';
    const first = await follow(runId, null);
    await store.tokenLog.append(token(runId, 0));
    await eventually(async () => first.got.length === 1, 10_000, 'the live token');
    first.feed.close();
    await redis.pexpire(store.keys.tokenLog(runId), 1);
    await eventually(async () => (await redis.exists(store.keys.tokenLog(runId))) === 0, 10_000, 'the expiry');
    const back = await follow(runId, first.feed.position);
    back.feed.close();
    expect(back.got).toEqual([{ type: 'token-gap', runId, after: first.feed.position }]);
  });
});
