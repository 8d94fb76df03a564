/**
 * A worker process for the paid-claims chaos test: graph `paid-claim` asks the model once
 * (memoised, so claimed). With BLOCK_EVENT_LOOP_MS set, 300 ms after its model request goes out this
 * process blocks its own event loop that long with a synchronous loop — a stalled process, not a dead
 * one: its job lock cannot be renewed, but its liveness thread keeps beating.
 */
import { loadConfig } from '../../shared/config/config.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';

const blockMs = Number(process.env.BLOCK_EVENT_LOOP_MS ?? 0);
let blocked = false;

const paidClaimGraph = defineGraph({
  name: 'paid-claim',
  state: { answer: channel.replace('') },
  output: (state) => ({ answer: state.answer }),
})
  .node('ask', async (_state, context) => {
    if (blockMs > 0 && !blocked) {
      blocked = true;
      setTimeout(() => {
        const until = Date.now() + blockMs;
        while (Date.now() < until) {
          // a deliberate stall: nothing else on this thread runs (lock renewal included)
        }
      }, 300);
    }
    const call = await callLanguageModel(context, {
      messages: [{ role: 'user', content: `say something worth paying for (pid ${process.pid})` }],
    });
    return { answer: call.message.content ?? '' };
  })
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

const config = loadConfig();
const worker = await startWorker({
  config,
  graphs: [paidClaimGraph],
  logger: createLogger(config.logLevel, { role: 'claim-worker' }),
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
