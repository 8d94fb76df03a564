import { appendFileSync, readFileSync } from 'node:fs';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';

/** What the `callbacker` graph does: its input. */
export interface CallbackInput {
  timeoutMs?: number;
  /** Each hand-out of the URL is appended to this file (a worker in another process tells the test). */
  urlFile?: string;
  /** Hang after the first hand-out (before parking), so the test can kill the worker there. */
  hangFirst?: boolean;
}

/**
 * `callbacker`: one node that asks for a callback URL (`context.callback`), hands it out (`onUrl`, and
 * `input.urlFile`), waits on it and outputs the body POSTed, or 'timed out'.
 */
export function callbackGraph(onUrl: (runId: string, url: string) => void = () => undefined) {
  return defineGraph({
    name: 'callbacker',
    input: undefined,
    state: { ask: channel.replace<CallbackInput>({}), got: channel.replace<unknown>(null) },
    initialState: (input: unknown) => ({ ask: (input ?? {}) as CallbackInput }),
    output: (state) => state.got,
  })
    .node('ask', async (state, context) => {
      const { timeoutMs, urlFile, hangFirst } = state.ask;
      const cb = await context.callback(timeoutMs === undefined ? {} : { timeoutMs });
      onUrl(context.runId, cb.url);
      if (urlFile) {
        appendFileSync(urlFile, `${cb.url}\n`);
        const handedOut = readFileSync(urlFile, 'utf8').trim().split('\n').length;
        if (hangFirst && handedOut === 1) await new Promise((resolve) => setTimeout(resolve, 120_000));
      }
      const outcome = await cb.wait();
      return { got: 'timedOut' in outcome ? 'timed out' : { body: outcome.body } };
    })
    .edge(START, 'ask')
    .edge('ask', END)
    .build();
}
