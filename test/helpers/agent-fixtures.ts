import { z } from 'zod';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { defineTool } from '../../shared/ports/define-tool.js';
import { defineGuardrail } from '../../worker/agents/guardrails/define-guardrail.js';
import type { ToolProviderRequest } from '../../worker/agents/tools/tool-provider.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import type { ReflectWriter } from '../../worker/agents/graphs/reflect.js';

// Pieces of agents that the logic tests (test/unit/*-logic.test.ts) and the end-to-end files both run.

/** A custom output guardrail: reprompts an answer that names Acme. */
export const noCompetitors = defineGuardrail({
  name: 'no_competitors',
  description: 'Answers never name Acme',
  stages: ['output'],
  check: (text) =>
    /acme/i.test(text) ? { action: 'reprompt', reason: 'Do not name competitors.' } : { action: 'pass' },
});

/** A writer of one's own: one model call with its own prompt, revising against the latest critique. */
export const terseWriter: ReflectWriter = async (state, context) => {
  const prompt = state.critique ? `Revise "${state.draft}" (${state.critique}): ${state.task}` : state.task;
  const response = await callLanguageModel(context, {
    messages: [
      { role: 'system', content: 'You write one line.' },
      { role: 'user', content: prompt },
    ],
  });
  return { draft: response.message.content ?? '' };
};

/** A judge of one's own as a subgraph of two steps, no model: approves a draft of at most five words. */
export const wordCountJudge = defineGraph({
  name: 'word-count-judge',
  state: {
    draft: channel.replace(''),
    critique: channel.replace<string | null>(null),
    verdict: channel.replace<unknown>(null),
  },
})
  .node('count', (state) => ({ critique: `${state.draft.split(/\s+/).filter(Boolean).length} words` }))
  .node('decide', (state) => {
    const words = Number.parseInt(state.critique ?? '0', 10);
    return { verdict: { approved: words <= 5, critique: words <= 5 ? '' : `Use at most 5 words, not ${words}.` } };
  })
  .edge(START, 'count')
  .edge('count', 'decide')
  .edge('decide', END)
  .build();

/** What `refund` executed, in order: a test empties it before each case. */
export const executed: string[] = [];

/** A tool a person approves before it runs. */
export const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order (a person approves each refund)',
  input: z.object({ order: z.string(), amount: z.number() }),
  requiresApproval: true,
  execute: ({ order, amount }) => {
    executed.push(`refund ${order} ${amount}`);
    return { refunded: amount };
  },
});

/** What `wire` executed, in order: a test empties it before each case. */
export const wired: number[] = [];
/** A payment a person approves before it runs, whichever graph calls it. */
export const wire = defineTool({
  name: 'wire',
  description: 'Wires money out (a person approves each wire)',
  input: z.object({ amount: z.number() }),
  requiresApproval: true,
  execute: ({ amount }) => {
    wired.push(amount);
    return { wired: amount };
  },
});

/** A tool that records the transfers it makes in `transfers`. */
export const transfers: { to: string; amount: number }[] = [];
export const transfer = defineTool({
  name: 'transfer',
  description: 'Transfers money',
  input: z.object({ to: z.string(), amount: z.number() }),
  execute: ({ to, amount }) => {
    transfers.push({ to, amount });
    return { sent: amount, to };
  },
});

export const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => `Sunny in ${city}`,
});
export const stocks = defineTool({
  name: 'stocks',
  description: 'A stock price',
  input: z.object({ symbol: z.string() }),
  execute: ({ symbol }) => `${symbol}: 42`,
});
export const providerCalls: ToolProviderRequest[] = [];

/** A tool provider: the weather tool for weather questions, else stocks; fails on BROKEN. Records its calls. */
export function topicTools(request: ToolProviderRequest) {
  providerCalls.push(request);
  const query = String((request.input as { query: string }).query);
  if (query.includes('BROKEN')) throw new Error('the tool catalogue is down');
  return query.includes('weather') ? [weather] : [stocks];
}
