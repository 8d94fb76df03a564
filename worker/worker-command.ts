import type { Command } from 'commander';

/** `agentq worker`: runs until SIGTERM/SIGINT, then shuts down gracefully. */
export function registerWorkerCommand(program: Command, parseCount: (name: string) => (value: string) => number): void {
  program
    .command('worker')
    .description('run a worker: take runs in and execute their steps')
    .option(
      '--concurrency <n>',
      'steps at once in this process (default AGENTQ_WORKER_CONCURRENCY)',
      parseCount('--concurrency'),
    )
    .action(async (options: { concurrency?: number }) => {
      // Loaded here, not at the top: other commands should not pay for the worker's modules.
      const [{ startWorker }, { loadConfig }, { createLogger }] = await Promise.all([
        import('./start-worker.js'),
        import('../shared/config/config.js'),
        import('../shared/telemetry/logger.js'),
      ]);
      const config = loadConfig();
      const logger = createLogger(config.logLevel, { role: 'worker' });
      const worker = await startWorker({
        config,
        logger,
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
      });
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          logger.info({ signal }, 'signal received');
          // The close is bounded (AGENTQ_SHUTDOWN_GRACE_MS + AGENTQ_SHUTDOWN_RELEASE_MS); a connection it had to
          // drop may still hold the event loop, so the process ends a second later whatever is left.
          void worker.close().then(() => {
            setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
            resolve();
          });
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
    });
}
