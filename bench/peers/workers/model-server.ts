/**
 * The scripted model every system calls, in a process of its own so that the CPU the bench counts
 * (every process a system needs) leaves the model out. IPC:
 * - `{type: 'url'}` → `{type: 'url', url}`;
 * - `{type: 'latency', ms}` → `{type: 'latency'}`: answers wait `ms` from now on, and the log starts empty;
 * - `{type: 'answered'}` → `{type: 'answered', count}`: chat requests answered since the log started;
 * - `{type: 'log'}` → `{type: 'log', calls}`: each chat request's (run, step), arrival, answer and outcome.
 */
import { startScriptedOpenAIServer } from '../../../test/fakes/scripted-openai-server.js';
import { promptOf, stepOfPrompt } from '../peer-steps.js';

let latency = 0;
const server = await startScriptedOpenAIServer({ script: () => ({ delayMs: latency, content: 'ok' }) });

process.on('message', (message: { type: string; ms?: number }) => {
  if (message.type === 'url') process.send?.({ type: 'url', url: server.url });
  if (message.type === 'latency') {
    latency = message.ms ?? 0;
    server.reset();
    process.send?.({ type: 'latency' });
  }
  if (message.type === 'answered')
    process.send?.({
      type: 'answered',
      count: server.chatRequests().filter((request) => request.outcome === 'answered').length,
    });
  if (message.type === 'log')
    process.send?.({
      type: 'log',
      calls: server.chatRequests().map((request) => ({
        step: stepOfPrompt(promptOf(request.body)) ?? '?',
        receivedAt: request.receivedAt,
        answeredAt: request.answeredAt,
        outcome: request.outcome,
      })),
    });
  if (message.type === 'stop') void server.close().then(() => process.exit(0));
});
process.send?.({ type: 'ready' });
