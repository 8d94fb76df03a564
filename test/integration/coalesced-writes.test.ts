import type { Socket } from 'node:net';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createRedis } from '../../shared/redis/create-redis.js';

/** A worker connection sends the commands of one event-loop callback in one socket write (create-redis.ts). */
describe('worker connections coalesce writes', () => {
  const connections: Redis[] = [];
  afterEach(() => {
    for (const redis of connections.splice(0)) redis.disconnect();
  });

  /** Connects with `role`, then sends 20 commands from one callback; → the socket writes they took and their replies. */
  async function burst(role: 'worker' | 'producer'): Promise<{ writes: number; replies: unknown[] }> {
    const redis = createRedis(inject('redisUrl'), role);
    connections.push(redis);
    // A producer connection has no offline queue: wait until it is ready.
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
    const socket = (redis as unknown as { stream: Socket }).stream;
    let writes = 0;
    const write = socket._write.bind(socket);
    const writev = socket._writev?.bind(socket);
    socket._write = (...args: Parameters<Socket['_write']>) => {
      writes += 1;
      write(...args);
    };
    if (writev) {
      socket._writev = (...args: Parameters<NonNullable<Socket['_writev']>>) => {
        writes += 1;
        writev(...args);
      };
    }
    const replies = await Promise.all(Array.from({ length: 20 }, (_value, index) => redis.echo(`c${index}`)));
    return { writes, replies };
  }

  it('a worker connection: twenty commands from one callback, one write, every reply in order', async () => {
    const { writes, replies } = await burst('worker');
    expect(replies).toEqual(Array.from({ length: 20 }, (_value, index) => `c${index}`));
    expect(writes).toBe(1);
  });

  it('a producer connection is left as it was: one write per command', async () => {
    const { writes, replies } = await burst('producer');
    expect(replies).toHaveLength(20);
    expect(writes).toBe(20);
  });
});
