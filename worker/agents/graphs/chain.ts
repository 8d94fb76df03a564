import { z } from 'zod';
import { sleep } from '../../../shared/contracts/abort.js';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { channel } from '../../../shared/graph/channels.js';
import { defineGraph } from '../../../shared/graph/define-graph.js';
import { END, START } from '../../../shared/graph/graph.js';

const chainInputSchema = z
  .object({
    steps: z.number().int().min(1).max(100_000),
    sleepMs: z.number().int().min(0).max(3_600_000).default(0),
    /** Each step throws a retryable error on its first `failTimes` attempts. */
    failTimes: z.number().int().min(0).max(100).default(0),
    /** Append one history message per step (to measure a growing history). */
    appendMessages: z.boolean().default(false),
  })
  .strict();

/**
 * The diagnostic graph: N sequential steps, each sleeping M ms (honouring abort) and appending its
 * index to `visited`. Operators, benchmarks and chaos tests use it.
 */
export const chainGraph = defineGraph({
  name: 'chain',
  version: '1',
  input: chainInputSchema,
  state: {
    steps: channel.replace(0),
    sleepMs: channel.replace(0),
    failTimes: channel.replace(0),
    appendMessages: channel.replace(false),
    next: channel.replace(0),
    visited: channel.append<number>(),
  },
  initialState: (input) => ({ ...input, next: 0 }),
  output: (state) => ({ visited: state.visited }),
})
  .node(
    'step',
    async (state, context) => {
      if (context.attempt <= state.failTimes) {
        throw new AgentqError(
          'INTERNAL',
          `chain: planned failure of step ${state.next} on attempt ${context.attempt} of ${state.failTimes + 1}`,
          {
            retryable: true,
          },
        );
      }
      if (state.sleepMs > 0) await sleep(state.sleepMs, context.abortSignal);
      return {
        visited: state.next,
        next: state.next + 1,
        ...(state.appendMessages ? { messages: [{ role: 'assistant' as const, content: `step ${state.next}` }] } : {}),
      };
    },
    { retry: { maxAttempts: 5, initialDelayMs: 200, maxDelayMs: 5000 } },
  )
  .edge(START, 'step')
  .route('step', (state) => (state.next < state.steps ? 'step' : END), ['step', END])
  .build();
