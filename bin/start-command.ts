import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Config } from '../shared/config/config.js';
import type { PrivateRedis } from '../shared/redis/private-redis-server.js';
import { redactCredentials } from '../shared/contracts/redact-credentials.js';

async function answers(url: string): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    connectTimeout: 500,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/**
 * `agentq start` (what `npm start` runs): the worker, the API and the dashboard in one process. Without
 * REDIS_URL it uses the Redis on the local port if one answers, and otherwise starts a private
 * redis-server there (AOF on, data under AGENTQ_DATA_DIR) that it stops again on exit.
 */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description(
      'run worker + API + dashboard; without REDIS_URL, start a private redis-server if none answers locally',
    )
    .action(async () => {
      // Loaded when the command runs, not when the CLI starts (every other command would pay for them).
      const [{ loadConfig }, { createLogger }, { startPrivateRedis }, { ensureRedisServer }] = await Promise.all([
        import('../shared/config/config.js'),
        import('../shared/telemetry/logger.js'),
        import('../shared/redis/private-redis-server.js'),
        import('./ensure-redis-server.js'),
      ]);
      const base = loadConfig();
      const logger = createLogger(base.logLevel, { role: 'start' });
      let privateRedis: PrivateRedis | undefined;
      let config: Config = base;
      // Cluster mode (REDIS_CLUSTER_NODES) has its Redis: no embedded one.
      if (!base.redisUrl && !base.redisClusterNodes) {
        const localUrl = `redis://127.0.0.1:${base.localRedisPort}`;
        if (await answers(localUrl)) {
          logger.info({ redis: localUrl }, 'REDIS_URL is unset; using the Redis that answers locally');
        } else {
          ensureRedisServer((line) => logger.info(line));
          const dir = resolve(base.dataDir, 'redis');
          // Detached: Ctrl-C reaches the whole foreground process group; Redis must outlive the graceful
          // stop of the worker and the API, so it gets no SIGINT of its own and is stopped last.
          privateRedis = await startPrivateRedis({
            port: base.localRedisPort,
            dir,
            appendonly: true,
            detached: true,
            logFile: 'redis.log',
          });
          logger.info(
            { redis: privateRedis.url, dir, pid: privateRedis.process.pid },
            'REDIS_URL is unset; started a private redis-server (AOF on)',
          );
        }
        config = { ...base, redisUrl: localUrl };
      }
      const { startWorker } = await import('../worker/start-worker.js');
      const { startApi } = await import('../producer/api/start-api.js');
      const worker = await startWorker({ config, logger });
      // An API that cannot start (its port taken) stops the worker and the private Redis, or the process
      // would go on running a worker without the API it was asked for.
      const api = await startApi({ config, logger }).catch(async (error: unknown) => {
        await worker.close();
        await privateRedis?.stop();
        throw error;
      });
      process.stderr.write(
        [
          'agentq is running',
          `  api:       ${api.url}/v1/runs   (OpenAPI: ${api.url}/docs)`,
          `  dashboard: ${api.url}/admin/queues`,
          `  metrics:   ${api.url}/metrics`,
          `  redis:     ${config.redisClusterNodes ? `cluster, seeds ${config.redisClusterNodes.map((node) => `${node.host}:${node.port}`).join(',')}` : redactCredentials(config.redisUrl ?? '')}${privateRedis ? ` (private, data in ${resolve(base.dataDir, 'redis')})` : ''}`,
          `  worker:    concurrency ${config.concurrency}`,
          '  stop:      Ctrl-C (or SIGTERM)',
          '',
        ].join('\n'),
      );
      await new Promise<void>((done) => {
        let stopping = false;
        const stop = (signal: string) => {
          if (stopping) {
            // A second Ctrl-C: the user will not wait for the grace period. The 'exit' hook ends Redis.
            logger.warn({ signal }, 'stopping now, without waiting for active steps');
            process.exit(130);
          }
          stopping = true;
          logger.info(
            { signal, graceMs: config.shutdownGraceMs },
            'stopping: the API, then the worker (active steps get the grace period), then Redis',
          );
          void (async () => {
            await api.close();
            await worker.close();
            await privateRedis?.stop();
            logger.info('stopped');
            // Both closes are bounded; a connection they had to drop may still hold the event
            // loop, so the process ends a second later whatever is left.
            setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
            done();
          })();
        };
        process.on('SIGTERM', () => stop('SIGTERM'));
        process.on('SIGINT', () => stop('SIGINT'));
      });
    });
}
