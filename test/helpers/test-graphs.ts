import { sleep } from '../../shared/contracts/abort.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';

/** Counts node executions per run and node, so tests can prove what ran and what did not. */
export class Calls {
  private readonly counts = new Map<string, number>();
  hit(runId: string, node: string): void {
    const key = `${runId}/${node}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  of(runId: string, node: string): number {
    return this.counts.get(`${runId}/${node}`) ?? 0;
  }
}

/** a → b → c; `b` fails without retry while `failing` holds the run id. */
export function threeStepGraph(calls: Calls, failing: Set<string>) {
  return defineGraph({ name: 'three', state: { log: channel.append<string>() }, output: (state) => state.log })
    .node('a', (_state, context) => {
      calls.hit(context.runId, 'a');
      return { log: 'a' };
    })
    .node('b', (_state, context) => {
      calls.hit(context.runId, 'b');
      if (failing.has(context.runId))
        throw new AgentqError('TOOL_ERROR', 'b refuses while the flag is set', { retryable: false });
      return { log: 'b' };
    })
    .node('c', (_state, context) => {
      calls.hit(context.runId, 'c');
      return { log: 'c' };
    })
    .edge(START, 'a')
    .edge('a', 'b')
    .edge('b', 'c')
    .edge('c', END)
    .build();
}

/** One node that waits until aborted (or `ms`), with a timeout and two attempts. */
export function slowGraph(calls: Calls, aborts: Map<string, { at: number; reason: string }>, timeoutMs?: number) {
  return defineGraph({
    name: 'slow',
    state: { done: channel.replace(false), before: channel.replace('') },
    input: undefined,
  })
    .node('first', () => ({ before: 'kept' }))
    .node(
      'wait',
      async (_state, context) => {
        calls.hit(context.runId, 'wait');
        try {
          await sleep(60_000, context.abortSignal);
        } catch (error) {
          aborts.set(context.runId, { at: Date.now(), reason: (error as Error).message });
          throw error;
        }
        return { done: true };
      },
      {
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
        retry: { maxAttempts: 2, initialDelayMs: 50, jitter: false },
      },
    )
    .edge(START, 'first')
    .edge('first', 'wait')
    .edge('wait', END)
    .build();
}
