import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';

type WorkerEntry = typeof import('./worker-entry.js');

/**
 * The worker's modules: from the bundle `npm run build` makes of worker-entry.ts (one file, and chunks
 * for what loads lazily) when it is there, else worker-entry.js and the hundreds of modules it imports
 * (from the TypeScript sources, or a dist/ built without it). Node resolves, reads and compiles each
 * module of its own, which was most of a worker's start.
 */
async function loadWorkerEntry(): Promise<WorkerEntry> {
  const bundle = new URL('./worker-entry.bundle.js', import.meta.url);
  if (bundle.protocol === 'file:' && existsSync(fileURLToPath(bundle)))
    return (await import(bundle.href)) as WorkerEntry;
  return import('./worker-entry.js');
}

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
      const { startWorker, loadConfig, createLogger } = await loadWorkerEntry();
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
