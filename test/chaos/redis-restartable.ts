import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, startPrivateRedis, type PrivateRedis } from '../../shared/redis/private-redis-server.js';

/**
 * A redis-server of the test's own (never the shared one from `inject('redisUrl')`) that can be
 * killed, shut down, stopped and started again on the same port with the same AOF directory, so the
 * workers and clients reconnect to "the same Redis" and the data survives as it would in production.
 */
export interface RestartableRedis {
  readonly url: string;
  readonly port: number;
  /** SIGKILL: no chance to flush; what survives is what AOF had written to the page cache. */
  kill(): Promise<void>;
  /** `SHUTDOWN` (Redis's graceful stop: fsyncs the AOF), then waits for the process to exit. */
  shutdown(): Promise<void>;
  /** SIGSTOP: the process keeps its sockets open but answers nothing. */
  pause(): void;
  /** SIGCONT after `pause()`. */
  resume(): void;
  /** Starts redis-server again on the same port and dir; resolves with `Date.now()` once it answers PING. */
  start(): Promise<number>;
  /** Stops the server (SIGCONT first if paused) and removes its directory. */
  close(): Promise<void>;
}

export async function startRestartableRedis(): Promise<RestartableRedis> {
  const port = await freePort();
  // Our own dir: PrivateRedis.stop() would delete a temporary one, and with it the AOF we restart from.
  const dir = mkdtempSync(join(tmpdir(), 'agentq-redis-chaos-'));
  const launch = () => startPrivateRedis({ port, dir, appendonly: true });
  let server: PrivateRedis | undefined = await launch();
  const url = server.url;
  const running = (): PrivateRedis => {
    if (!server) throw new Error('redis-server is not running; start() it first');
    return server;
  };
  const exited = (child: PrivateRedis['process']) =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => child.once('exit', () => resolve()));

  return {
    url,
    port,
    async kill() {
      const child = running().process;
      server = undefined;
      const gone = exited(child);
      child.kill('SIGKILL');
      await gone;
    },
    async shutdown() {
      const child = running().process;
      server = undefined;
      const gone = exited(child);
      const admin = new Redis(url, { maxRetriesPerRequest: 0, retryStrategy: () => null });
      admin.on('error', () => undefined);
      // The connection drops as Redis exits, so the reply never comes: the exit is the answer.
      void admin.call('SHUTDOWN').catch(() => undefined);
      await gone;
      admin.disconnect();
    },
    pause() {
      running().process.kill('SIGSTOP');
    },
    resume() {
      running().process.kill('SIGCONT');
    },
    async start() {
      if (server) throw new Error('redis-server is already running');
      server = await launch();
      return Date.now();
    },
    async close() {
      if (server) {
        server.process.kill('SIGCONT');
        await server.stop();
        server = undefined;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
