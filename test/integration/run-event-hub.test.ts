import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunEventHub, type RunEventFollower } from '../../producer/client/run-event-hub.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import { connectRedis } from '../../shared/redis/connect-redis.js';
import type { Config } from '../../shared/config/config.js';
import type { RunEvent } from '../../shared/contracts/run-record.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { suiteSeed } from '../helpers/suite-scale.js';
import { testConfig } from '../helpers/test-env.js';

/**
 * The multiplexed reader behind every API event stream: followers that join at any moment — before the
 * first event, in the middle of a burst, after `after` ids of their own — each get exactly the events
 * after their `after`, in order, none twice, while one blocking connection serves them all.
 */
describe('RunEventHub', () => {
  const SEED = suiteSeed();
  let config: Config;
  let client: AgentClient;
  let hub: RunEventHub;

  beforeAll(async () => {
    config = testConfig();
    client = new AgentClient({ config });
    // The store's connection has no offline queue: wait until it is up, as the API's routes do by their first read.
    await client.get('warm-up');
    hub = new RunEventHub(client.store, () => connectRedis(config, 'blocking'), { blockMs: 200, count: 7 });
  });
  afterAll(async () => {
    hub?.close();
    await client?.close();
  });

  /** Reads until run-end; → the events. */
  // Events are added only to a run that exists (a late writer must not make an expired run's stream again).
  const openRun = (runId: string) => client.store.redis.hset(client.store.keys.run(runId).meta, 'status', 'running');
  const drain = async (follower: RunEventFollower): Promise<RunEvent[]> => {
    const seen: RunEvent[] = [];
    for (let round = 0; round < 10_000; round += 1) {
      const events = await follower.next(100);
      seen.push(...events);
      if (seen.at(-1)?.type === 'run-end') break;
    }
    follower.close();
    return seen;
  };

  it(`followers joining during bursts each see every later event once, in order (seed ${SEED})`, async () => {
    const random = seededRandom(SEED);
    const runs = ['hub-a', 'hub-b', 'hub-c'];
    const EVENTS = 120;
    const followers: { runId: string; after: string; done: Promise<RunEvent[]> }[] = [];
    const writer = async (runId: string) => {
      await openRun(runId);
      for (let index = 0; index < EVENTS; index += 1) {
        await client.store.eventLog.addEvent(runId, index === EVENTS - 1 ? 'run-end' : 'step-end', { index });
        if (random() < 0.3) await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 15)));
      }
    };
    const joiner = async () => {
      for (let index = 0; index < 40; index += 1) {
        const runId = runs[Math.floor(random() * runs.length)]!;
        const ids = (await client.store.eventLog.events(runId, { count: 1000 })).map((event) => event.id);
        // From the start or from a random event already written (before run-end: a follower after the end waits for nothing).
        const before = ids.slice(0, -1);
        const after = random() < 0.3 || before.length === 0 ? '0-0' : before[Math.floor(random() * before.length)]!;
        followers.push({ runId, after, done: drain(hub.follow(runId, after)) });
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * 20)));
      }
    };
    await Promise.all([...runs.map(writer), joiner()]);
    const results = await Promise.all(followers.map((follower) => follower.done));
    for (const [index, follower] of followers.entries()) {
      const all = (await client.store.eventLog.events(follower.runId, { count: 1000 })).map((event) => event.id);
      const expected = follower.after === '0-0' ? all : all.slice(all.indexOf(follower.after) + 1);
      expect(
        results[index]!.map((event) => event.id),
        `${follower.runId} after ${follower.after}`,
      ).toEqual(expected);
    }
    // One reader for every run followed (one Redis), and none once nobody follows.
    expect(hub.followerCount()).toBe(0);
    expect(hub.readerCount()).toBe(0);
  }, 60_000);

  it('serves many runs with one blocking connection, and wakes for a run it did not follow yet', async () => {
    const followers = Array.from({ length: 50 }, (_, index) => hub.follow(`hub-many-${index}`));
    // Caught up at once (nothing written yet): the hub takes over.
    for (const follower of followers) expect(await follower.next(0)).toEqual([]);
    expect(hub.readerCount()).toBe(1);
    const late = hub.follow('hub-late');
    expect(await late.next(0)).toEqual([]);
    await openRun('hub-late');
    await client.store.eventLog.addEvent('hub-late', 'run-end', {});
    // Within the follower's wait, not after the hub's next round: the wake-up stream ended the XREAD.
    const events = await late.next(10_000);
    expect(events.map((event) => event.type)).toEqual(['run-end']);
    expect(hub.readerCount()).toBe(1);
    for (const follower of [...followers, late]) follower.close();
    expect(hub.readerCount()).toBe(0);
  });
});
