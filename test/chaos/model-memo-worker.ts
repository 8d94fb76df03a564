/**
 * A worker process for the paid-work-at-most-once chaos test: graph `paid-call` asks the model once (memoised), then,
 * when the response is fresh from this process, waits a minute so the test can SIGKILL it after the save.
 * Config (model endpoint included) from the environment.
 */
import { sleep } from '../../shared/contracts/abort.js';
import { loadConfig } from '../../shared/config/config.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';

const paidCallGraph = defineGraph({
  name: 'paid-call',
  state: { answer: channel.replace('') },
  output: (state) => ({ answer: state.answer }),
})
  .node('ask', async (_state, context) => {
    const call = await callLanguageModel(context, {
      messages: [{ role: 'user', content: 'say something worth paying for' }],
    });
    // Only the process that paid waits: the one that takes over after the kill finds the saved response.
    if (call.fresh) await sleep(60_000, context.abortSignal);
    return { answer: call.message.content ?? '' };
  })
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

const config = loadConfig();
const worker = await startWorker({
  config,
  graphs: [paidCallGraph],
  logger: createLogger(config.logLevel, { role: 'chaos-worker' }),
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
