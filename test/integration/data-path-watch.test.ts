import { afterAll, describe, expect, it } from 'vitest';
import { createRedis } from '../../shared/redis/create-redis.js';
import { redisFaultOf } from '../../shared/redis/redis-fault.js';
import { Keys } from '../../shared/store/keys.js';
import { watchDataPath } from '../../worker/runtime/data-path-watch.js';
import { startLiveness } from '../../worker/runtime/liveness-thread.js';
import { startSilencingTcpProxy, type SilencingTcpProxy } from '../helpers/silencing-tcp-proxy.js';
import { eventually, testConfig } from '../helpers/test-env.js';

/**
 * A worker's data connections can go silent (socket open, no replies) while its liveness connection keeps
 * answering. The step connection's commands then fail with a Redis fault after the bound, the watch of
 * the data path says so, and the liveness thread stops beating until the connections answer again.
 */
describe('a silent data path', () => {
  const config = testConfig();
  const port = Number(new URL(config.redisUrl!).port);
  const closers: (() => Promise<unknown> | void)[] = [];
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
  });
  const proxied = async (): Promise<SilencingTcpProxy> => {
    const proxy = await startSilencingTcpProxy(port, 'agentq-liveness-');
    closers.push(() => proxy.close());
    return proxy;
  };

  it('fails a step connection’s command with a Redis fault after its timeout instead of waiting', async () => {
    const proxy = await proxied();
    const step = createRedis(`redis://127.0.0.1:${proxy.port}`, 'step', 300);
    closers.push(() => step.disconnect());
    await step.ping();
    proxy.silence();
    const error = await step.set(`${config.keyPrefix}:x`, '1').catch((failure: unknown) => failure);
    expect(redisFaultOf(error)).toBe('unavailable');
    proxy.resume();
    expect(await step.ping()).toBe('PONG');
  });

  it('says the path fails once it has not answered for the bound, and once when it answers again', async () => {
    const proxy = await proxied();
    const url = `redis://127.0.0.1:${proxy.port}`;
    const data = createRedis(url, 'worker');
    const step = createRedis(url, 'step', 300);
    closers.push(
      () => data.disconnect(),
      () => step.disconnect(),
    );
    await Promise.all([data.ping(), step.ping()]);
    const changes: boolean[] = [];
    const watch = watchDataPath({
      connections: [data, step],
      intervalMs: 100,
      failingAfterMs: 500,
      onChange: (failing) => changes.push(failing),
    });
    closers.push(() => watch.stop());
    // Answering: nothing to say, however long.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(changes).toEqual([]);
    proxy.silence();
    await eventually(async () => changes.length > 0, 20_000, 'the watch to say the path fails');
    expect(changes).toEqual([true]);
    expect(watch.failing).toBe(true);
    proxy.resume();
    await eventually(async () => changes.length > 1, 20_000, 'the watch to say the path answers again');
    expect(changes).toEqual([true, false]);
  });

  it('does not take a blocked event loop for a failing path', async () => {
    const data = createRedis(config.redisUrl, 'worker');
    closers.push(() => data.disconnect());
    await data.ping();
    const changes: boolean[] = [];
    const watch = watchDataPath({
      connections: [data],
      intervalMs: 100,
      failingAfterMs: 500,
      onChange: (failing) => changes.push(failing),
    });
    closers.push(() => watch.stop());
    for (let block = 0; block < 3; block += 1) {
      // A PING in flight, its reply unread while the loop is held for 4× the bound.
      await new Promise((resolve) => setTimeout(resolve, 150));
      const until = Date.now() + 2000;
      while (Date.now() < until);
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(changes).toEqual([]);
  });

  it('the liveness thread stops beating while the parent says its data path fails, and beats again after', async () => {
    const keys = new Keys(config.keyPrefix, config.shards);
    const probe = createRedis(config.redisUrl, 'worker');
    closers.push(() => probe.disconnect());
    const liveness = startLiveness({
      redis: config,
      alivePrefixes: [keys.alivePrefix(0)],
      intervalMs: 100,
      ttlMs: 400,
      lockMs: 1000,
      registryKey: keys.livenessRegistry(),
      reapQueues: [],
      heldQueues: [],
    });
    closers.push(() => liveness.close());
    await liveness.ready;
    const aliveKey = keys.alivePrefix(0) + liveness.processId;
    expect(await probe.exists(aliveKey)).toBe(1);
    liveness.dataPathFailing(true);
    await eventually(async () => (await probe.exists(aliveKey)) === 0, 20_000, 'the liveness key to lapse');
    // And stays gone: nothing renews it while the path fails.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await probe.exists(aliveKey)).toBe(0);
    // The thread's own connection still carries what the parent asks of it.
    await liveness.runScript("return redis.call('SET', KEYS[1], ARGV[1])", [`${config.keyPrefix}:rescued`], ['yes']);
    expect(await probe.get(`${config.keyPrefix}:rescued`)).toBe('yes');
    liveness.dataPathFailing(false);
    await eventually(async () => (await probe.exists(aliveKey)) === 1, 20_000, 'the thread to beat again');
  });
});
