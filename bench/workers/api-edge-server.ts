/**
 * The API alone in a process of its own, for `bench/api-edge.ts`: its RSS and file descriptors are the
 * figures. AGENTQ_BENCH_ROOT names the checkout whose code it runs (another worktree, to measure before
 * and after a change with the same driver). Answers IPC: `{type: 'reset'}` starts a new peak,
 * `{type: 'report'}` → `{rssMb, peakRssMb, fds}`.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = process.env.AGENTQ_BENCH_ROOT ?? fileURLToPath(new URL('../..', import.meta.url));
const { createApi } = (await import(
  `${root}/producer/api/create-api.ts`
)) as typeof import('../../producer/api/create-api.js');
const { loadConfig } = (await import(
  `${root}/shared/config/config.ts`
)) as typeof import('../../shared/config/config.js');
const { createLogger } = (await import(
  `${root}/shared/telemetry/logger.ts`
)) as typeof import('../../shared/telemetry/logger.js');

const config = loadConfig(process.env);
const app = await createApi({ config, logger: createLogger('silent') });
const url = await app.listen({ port: 0, host: '127.0.0.1' });
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
let peak = process.memoryUsage().rss;
// Sampled often enough to see a buffered upload (it stays in memory for the whole hand-in).
setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5).unref();
process.on('message', (message: { type: string }) => {
  if (message.type === 'reset') peak = process.memoryUsage().rss;
  if (message.type === 'report')
    process.send?.({
      type: 'report',
      rssMb: mb(process.memoryUsage().rss),
      peakRssMb: mb(Math.max(peak, process.memoryUsage().rss)),
      fds: readdirSync('/proc/self/fd').length,
    });
  if (message.type === 'stop') void app.close().then(() => process.exit(0));
});
process.send?.({ type: 'ready', url });
