import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new InvalidArgumentError(`--port must be an integer 0-65535, got '${value}'`);
  return port;
}

/** `agentq api`: serves the HTTP API, Bull Board and /metrics until SIGTERM/SIGINT. */
export function registerApiCommand(program: Command): void {
  program
    .command('api')
    .description('serve the HTTP API, the dashboard (/admin/queues) and /metrics (PORT, HOST, AGENTQ_API_KEYS, …)')
    .option('--port <n>', 'listen port (default PORT or 3000)', parsePort)
    .option('--host <address>', 'listen address (default HOST or 127.0.0.1; loopback only without API keys)')
    .action(async (options: { port?: number; host?: string }) => {
      // Loaded here, not at the top: the other commands start without fastify.
      const [{ startApi }, { loadConfig }, { createLogger }] = await Promise.all([
        import('./start-api.js'),
        import('../../shared/config/config.js'),
        import('../../shared/telemetry/logger.js'),
      ]);
      const config = loadConfig();
      const logger = createLogger(config.logLevel, { role: 'api' });
      const api = await startApi({
        config,
        logger,
        ...(options.port === undefined ? {} : { port: options.port }),
        ...(options.host ? { host: options.host } : {}),
      });
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          logger.info({ signal }, 'signal received');
          // The close is bounded (AGENTQ_SHUTDOWN_GRACE_MS + AGENTQ_SHUTDOWN_RELEASE_MS); a connection it had to
          // drop may still hold the event loop, so the process ends a second later whatever is left.
          void api.close().then(() => {
            setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
            resolve();
          });
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
    });
}
