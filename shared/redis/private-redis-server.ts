import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

export interface PrivateRedisOptions {
  /** @default a free loopback port */
  port?: number;
  /** Data directory (AOF files). @default a temporary directory, removed by `stop()` */
  dir?: string;
  /** @default false */
  appendonly?: boolean;
  /** @default 'redis-server' on PATH */
  binary?: string;
  /**
   * Run redis-server in its own process group, so a terminal's Ctrl-C (SIGINT to the whole foreground
   * group) does not stop Redis before the workers and the API that still need it; `stop()` ends it
   * last. The process is still killed when ours exits. @default false
   */
  detached?: boolean;
  /** Redis's own log file (startup, shutdown reason); relative paths are under `dir`. @default none */
  logFile?: string;
}

export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  stop(): Promise<void>;
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/**
 * Starts a redis-server of our own on loopback (tests, benchmarks, `npm start` without REDIS_URL) and
 * resolves once it answers PING. `stop()` shuts it down (SHUTDOWN NOSAVE, then SIGKILL if it lingers).
 */
export async function startPrivateRedis({
  port,
  dir,
  appendonly = false,
  binary = 'redis-server',
  detached = false,
  logFile,
}: PrivateRedisOptions = {}): Promise<PrivateRedis> {
  const chosen = port ?? (await freePort());
  // stream-node-max-bytes: Redis 7.0 reserves a whole node (4 KB by default) for a stream's first entry,
  // and every run has an event stream; 1 KB nodes take a waiting run from about 6.6 KB to about 3.4 KB.
  const args = [
    '--port',
    String(chosen),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    appendonly ? 'yes' : 'no',
    '--maxmemory-policy',
    'noeviction',
    '--stream-node-max-bytes',
    '1024',
  ];
  // Never the current directory: an AOF or dump file would land in the caller's tree.
  const temporary = dir ? undefined : mkdtempSync(join(tmpdir(), 'agentq-redis-'));
  const dataDir = dir ?? temporary!;
  mkdirSync(dataDir, { recursive: true });
  args.push('--dir', dataDir);
  if (logFile) args.push('--logfile', isAbsolute(logFile) ? logFile : join(dataDir, logFile));
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], detached });
  // A detached Redis outlives us unless we end it: never leave one behind, even on process.exit().
  const killOnExit = () => child.kill('SIGTERM');
  if (detached) process.once('exit', killOnExit);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const spawnError = new Promise<never>((_resolve, reject) => child.once('error', reject));
  const url = `redis://127.0.0.1:${chosen}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = new Redis(url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    try {
      await Promise.race([probe.connect().then(() => probe.ping()), spawnError]);
      probe.disconnect();
      break;
    } catch (error) {
      probe.disconnect();
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`redis-server did not start on port ${chosen}: ${stderr.trim() || 'no output'}`, {
          cause: error,
        });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    url,
    port: chosen,
    process: child,
    async stop() {
      if (child.exitCode !== null) return;
      const client = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => undefined);
      await client.call('SHUTDOWN', appendonly ? 'SAVE' : 'NOSAVE').catch(() => undefined);
      client.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
      process.removeListener('exit', killOnExit);
      if (temporary) rmSync(temporary, { recursive: true, force: true });
    },
  };
}
