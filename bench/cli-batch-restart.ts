/**
 * `npx tsx bench/cli-batch-restart.ts [--kill-after-s N]` (default 120): `agentq batch` (the built CLI, so
 * `npm run build` first) answering 16 echo-rag questions through a real worker while its Redis (AOF on)
 * is shut down for 5 s and started again on the same port and data. Prints the CLI's exit code (or that
 * it was killed after N s), its wall time and how many answers it wrote: the figure of a batch that rides
 * out a Redis restart.
 */
import { batchAcrossRedisRestart } from '../test/chaos/cli-batch-restart.js';

const flag = process.argv.indexOf('--kill-after-s');
const killAfterS = flag === -1 ? 120 : Number(process.argv[flag + 1]);
const outcome = await batchAcrossRedisRestart({ killAfterMs: killAfterS * 1000 });
const exit = outcome.killed ? `killed after ${killAfterS} s (still running)` : `exit ${outcome.code}`;
console.log(
  `agentq batch across a 5 s Redis restart: ${exit}, ${outcome.seconds.toFixed(1)} s, ` +
    `${outcome.answers?.length ?? 0} answers written (${outcome.answers?.filter((a) => a.status === 'completed').length ?? 0} completed)`,
);
const lastLines = outcome.stderr.trim().split('\n').slice(-3).join('\n');
if (lastLines) console.log(`its last stderr lines:\n${lastLines}`);
