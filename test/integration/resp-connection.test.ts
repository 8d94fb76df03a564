import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { respAddressOf, RespConnection, RespReplyError, type RespAddress } from '../../shared/redis/resp-connection.js';

const timeouts = { readyTimeoutMs: 2000, commandTimeoutMs: 2000 };

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP server on loopback that answers each command line-by-line with `answer` (undefined: silence). */
async function fakeRedis(
  answer: (command: string[], count: number) => string | undefined,
): Promise<{ address: RespAddress; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      // Commands arrive as RESP arrays of bulk strings; take the complete ones.
      for (;;) {
        const match = /^\*(\d+)\r\n((?:\$\d+\r\n[^\r]*\r\n)*)/.exec(text);
        if (!match) return;
        const parts = [...match[2]!.matchAll(/\$\d+\r\n([^\r]*)\r\n/g)].map((part) => part[1]!);
        if (parts.length < Number(match[1])) return;
        text = text.slice(match[0].length);
        count += 1;
        const reply = answer(parts, count);
        if (reply !== undefined) socket.write(reply);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: { host: '127.0.0.1', port },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('respAddressOf', () => {
  it('reads plain redis:// URLs as ioredis does, and leaves everything else to ioredis', () => {
    expect(respAddressOf('redis://127.0.0.1:6379')).toEqual({ host: '127.0.0.1', port: 6379 });
    expect(respAddressOf('redis://redis')).toEqual({ host: 'redis', port: 6379 });
    expect(respAddressOf('redis://:p%40ss@[::1]:7000/3')).toEqual({ host: '::1', port: 7000, password: 'p@ss', db: 3 });
    expect(respAddressOf('redis://alice:secret@host:1/0')).toEqual({
      host: 'host',
      port: 1,
      username: 'alice',
      password: 'secret',
    });
    for (const other of [
      'rediss://host:6380',
      'redis://host?family=6',
      'redis://host/x',
      'redis://alice@host',
      'localhost:6379',
      '/tmp/redis.sock',
      'http://host',
      'not a url',
    ]) {
      expect(respAddressOf(other), other).toBeUndefined();
    }
  });
});

describe('RespConnection against redis-server', () => {
  let redis: Redis;
  let connection: RespConnection;
  const prefix = `resp-test-${process.pid}-${Date.now()}`;
  beforeAll(async () => {
    redis = new Redis(inject('redisUrl'));
    connection = await RespConnection.open(respAddressOf(inject('redisUrl'))!, timeouts);
  });
  afterAll(async () => {
    connection.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('reads each kind of reply as ioredis does', async () => {
    // A value of several MB with multi-byte characters arrives in many chunks, split anywhere.
    const big = 'é€😀x'.repeat(400_000);
    await redis.hset(`${prefix}:hash`, { a: '1', big, empty: '' });
    const pairs = (await connection.command('HGETALL', `${prefix}:hash`)) as string[];
    const fields = Object.fromEntries(
      Array.from({ length: pairs.length / 2 }, (_unused, index) => [pairs[2 * index], pairs[2 * index + 1]]),
    );
    // Compared as a flag: a failure would print the whole value.
    expect(fields.big === big, 'the big value arrives whole').toBe(true);
    expect({ ...fields, big: 'checked' }).toEqual({ a: '1', big: 'checked', empty: '' });
    await redis.set(`${prefix}:big`, big);
    expect((await connection.command('GET', `${prefix}:big`)) === big, 'a big reply of its own arrives whole').toBe(
      true,
    );
    expect(await connection.command('HGETALL', `${prefix}:missing`)).toEqual([]);
    expect(await connection.command('GET', `${prefix}:missing`)).toBeNull();
    expect(await connection.command('INCRBY', `${prefix}:counter`, 41)).toBe(41);
    expect(await connection.command('SET', `${prefix}:text`, 'hello')).toBe('OK');
    expect(await connection.command('EVAL', "return {1, {'two', 3}, false}", 0)).toEqual([1, ['two', 3], null]);
  });

  it('answers pipelined commands in the order they were sent', async () => {
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_unused, index) => connection.command('ECHO', `m${index}`)),
    );
    expect(replies).toEqual(Array.from({ length: 200 }, (_unused, index) => `m${index}`));
  });

  it('rejects an error reply with Redis’s message, as ioredis does, and goes on', async () => {
    await redis.set(`${prefix}:string`, 'x');
    const light = await connection.command('HGETALL', `${prefix}:string`).catch((error: unknown) => error);
    const full = await redis.hgetall(`${prefix}:string`).catch((error: unknown) => error);
    expect(light).toBeInstanceOf(RespReplyError);
    expect((light as Error).message).toBe((full as Error).message);
    expect(await connection.command('PING')).toBe('PONG');
  });

  it('selects the database of the URL', async () => {
    const db5 = new Redis(inject('redisUrl'), { db: 5 });
    try {
      await db5.set(`${prefix}:db`, 'five');
      const url = `${inject('redisUrl').replace(/\/\d*$/, '')}/5`;
      const selected = await RespConnection.open(respAddressOf(url)!, timeouts);
      expect(await selected.command('GET', `${prefix}:db`)).toBe('five');
      expect(await connection.command('GET', `${prefix}:db`)).toBeNull();
      selected.close();
    } finally {
      await db5.del(`${prefix}:db`);
      db5.disconnect();
    }
  });
});

describe('RespConnection with a password', () => {
  let server: ChildProcess;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', 's3cret'],
      { stdio: 'ignore' },
    );
    // Until it listens: ioredis's own retries answer the first command once it does.
    const probe = new Redis({ port, password: 's3cret', retryStrategy: () => 50 });
    probe.on('error', () => undefined);
    await probe.ping();
    probe.disconnect();
  });
  afterAll(() => {
    server.kill();
  });

  it('authenticates with the URL’s password, and refuses a wrong or missing one at once', async () => {
    const good = await RespConnection.open(respAddressOf(`redis://:s3cret@127.0.0.1:${port}`)!, timeouts);
    expect(await good.command('PING')).toBe('PONG');
    good.close();
    const started = Date.now();
    await expect(RespConnection.open(respAddressOf(`redis://:wrong@127.0.0.1:${port}`)!, timeouts)).rejects.toThrow(
      /WRONGPASS/,
    );
    await expect(RespConnection.open(respAddressOf(`redis://127.0.0.1:${port}`)!, timeouts)).rejects.toThrow(/NOAUTH/);
    expect(Date.now() - started).toBeLessThan(timeouts.readyTimeoutMs);
  });
});

describe('RespConnection when Redis misbehaves', () => {
  it('waits out a Redis still loading its data, then is ready', async () => {
    const fake = await fakeRedis((command, count) =>
      command[0] === 'PING'
        ? count < 3
          ? '-LOADING Redis is loading the dataset in memory\r\n'
          : '+PONG\r\n'
        : undefined,
    );
    try {
      const connection = await RespConnection.open(fake.address, timeouts);
      connection.close();
    } finally {
      await fake.close();
    }
  });

  it('gives up connecting after readyTimeoutMs when nothing answers', async () => {
    const silent = await fakeRedis(() => undefined);
    try {
      await expect(RespConnection.open(silent.address, { readyTimeoutMs: 300, commandTimeoutMs: 100 })).rejects.toThrow(
        /not ready within 300 ms \(Command timed out\)/,
      );
      const port = await freePort();
      await expect(
        RespConnection.open({ host: '127.0.0.1', port }, { readyTimeoutMs: 300, commandTimeoutMs: 100 }),
      ).rejects.toThrow(/not ready within 300 ms \(connect ECONNREFUSED/);
    } finally {
      await silent.close();
    }
  });

  it('fails a command unanswered within the command timeout, and every command after it', async () => {
    const fake = await fakeRedis((command) => (command[0] === 'PING' ? '+PONG\r\n' : undefined));
    try {
      const connection = await RespConnection.open(fake.address, { readyTimeoutMs: 1000, commandTimeoutMs: 100 });
      await expect(connection.command('HGETALL', 'k')).rejects.toThrow('Command timed out');
      await expect(connection.command('PING')).rejects.toThrow('Command timed out');
      connection.close();
    } finally {
      await fake.close();
    }
  });
});
