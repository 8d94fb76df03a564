/**
 * A chaos worker serving `sleeper` (its one node sleeps SLEEP_MS, then outputs when it slept and woke) and
 * `waiter` (test/helpers/waiter-graph.ts), and the child-run graphs (test/helpers/child-run-graphs.ts): the
 * tests SIGKILL it (or Redis) while steps are parked.
 */
import { loadConfig } from '../../shared/config/config.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { waiterGraph } from '../helpers/waiter-graph.js';
import { childDoubleGraph, parentSumGraph } from '../helpers/child-run-graphs.js';

const sleeper = defineGraph({
  name: 'sleeper',
  input: undefined,
  state: { sleptAt: channel.replace(0), wokeAt: channel.replace(0) },
  output: (state) => state,
})
  .node('nap', async (_state, context) => {
    const sleptAt = await context.memo('sleptAt', async () => Date.now());
    await context.sleep(Number(process.env.SLEEP_MS ?? 2000));
    return { sleptAt, wokeAt: Date.now() };
  })
  .edge(START, 'nap')
  .edge('nap', END)
  .build();

const config = loadConfig();
await startWorker({
  config,
  graphs: [sleeper, waiterGraph(), childDoubleGraph(), parentSumGraph()],
  logger: createLogger(config.logLevel, { role: 'chaos-worker' }),
});
process.stdout.write('ready\n');
