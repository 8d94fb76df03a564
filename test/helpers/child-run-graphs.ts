import { z } from 'zod';
import { AgentqError } from '../../shared/contracts/errors.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';

/**
 * Two graphs for child runs: `child-double` doubles `n` (or fails, or waits for an answer, as `mode` says),
 * and `parent-sum` starts one child per number with `runGraph` (one number) or `runGraphs` (several),
 * waits and sums their outputs; a child's failure comes back as the parent's output `error`.
 */
export function childDoubleGraph(onRun?: (n: number, runId: string) => Promise<void> | void) {
  return defineGraph({
    name: 'child-double',
    input: z.object({ n: z.number(), mode: z.enum(['ok', 'fail', 'ask']).default('ok') }),
    state: { n: channel.replace(0), mode: channel.replace('ok') },
    initialState: (input) => ({ n: input.n, mode: input.mode }),
    output: (state) => ({ doubled: state.n * 2 }),
  })
    .node('work', async (state, context) => {
      await onRun?.(state.n, context.runId);
      if (state.mode === 'fail') throw new AgentqError('TOOL_ERROR', `child ${state.n} was asked to fail`);
      if (state.mode === 'ask') context.interrupt({ question: 'go on?' });
      return {};
    })
    .edge(START, 'work')
    .edge('work', END)
    .build();
}

interface ParentInput {
  ns: number[];
  mode?: 'ok' | 'fail' | 'ask';
  /** Start the children and go on without waiting: the output lists their ids. */
  detach?: boolean;
}

export function parentSumGraph(onParked?: (error: unknown) => Promise<void> | void) {
  return defineGraph({
    name: 'parent-sum',
    state: {
      ask: channel.replace<ParentInput>({ ns: [] }),
      sum: channel.replace(0),
      children: channel.replace<string[]>([]),
      error: channel.replace<unknown>(null),
    },
    initialState: (input: ParentInput) => ({ ask: input }),
    output: (state) => ({ sum: state.sum, children: state.children, error: state.error }),
  })
    .node('call', async (state, context) => {
      const { ns, mode = 'ok', detach = false } = state.ask;
      try {
        if (detach) {
          const started = await context.runGraphs(
            ns.map((n) => ({ graph: 'child-double', input: { n, mode } })),
            { wait: false },
          );
          return { children: started.map((child) => child.runId) };
        }
        if (ns.length === 1) {
          const { doubled } = await context.runGraph<{ doubled: number }>('child-double', { n: ns[0], mode });
          return { sum: doubled };
        }
        const outputs = await context.runGraphs<{ doubled: number }>(
          ns.map((n) => ({ graph: 'child-double', input: { n, mode } })),
        );
        return { sum: outputs.reduce((total, output) => total + output.doubled, 0) };
      } catch (error) {
        if (error instanceof AgentqError && error.code === 'CHILD_RUN_FAILED')
          return { error: { code: error.code, message: error.message, details: error.details } };
        await onParked?.(error);
        throw error;
      }
    })
    .edge(START, 'call')
    .edge('call', END)
    .build();
}
