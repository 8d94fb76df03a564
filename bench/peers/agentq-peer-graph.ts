/**
 * agentq's side of the peers bench: STEPS nodes in a row, each a no-op or one model call made the
 * way agentq's own graphs make it (`callLanguageModel`: the answer is saved before it is used and its
 * usage recorded), with the prompt every peer sends (peer-steps.ts). Built from the package's public
 * entry points and the zod given, so the worker can run any checkout's built code (dist/) as users do,
 * with that checkout's own zod.
 */
import type { z as Zod } from 'zod';
import type * as Agentq from '../../index.js';
import type * as Agents from '../../worker/agents/index.js';
import { STEPS, stepRequest, type StepKind } from './peer-steps.js';

export const PEER_GRAPH_NAME = 'bench-peer';

export function buildPeerGraph(
  { defineGraph, channel, START, END }: typeof Agentq,
  { callLanguageModel }: Pick<typeof Agents, 'callLanguageModel'>,
  z: typeof Zod,
) {
  const builder = defineGraph({
    name: PEER_GRAPH_NAME,
    version: '1',
    input: z.object({ kind: z.enum(['noop', 'model']) }).strict(),
    state: { kind: channel.replace<StepKind>('noop'), answers: channel.append<string>() },
    initialState: (input) => ({ kind: input.kind }),
    output: (state) => ({ answers: state.answers }),
  });
  for (let index = 0; index < STEPS; index += 1) {
    builder.node(`s${index}`, async (state, context) => {
      if (state.kind === 'noop') return { answers: 'ok' };
      const response = await callLanguageModel(context, stepRequest(context.runId, index));
      return { answers: response.message.content ?? '' };
    });
    builder.edge(index === 0 ? START : `s${index - 1}`, `s${index}`);
  }
  return builder.edge(`s${STEPS - 1}`, END).build();
}
