import { z } from 'zod';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import type { Message } from '../../shared/contracts/run-record.js';

/**
 * The worker-fault scenarios' graph `model-steps`: N sequential steps, each exactly one memoised model
 * call (saved before it is acted on) through the real `openai` SDK. The prompt names the run, the step and the worker
 * process, so the scripted server can count calls per (run, step) and tell which process made each. Each step
 * appends the assistant message (it carries a tool call) and the tool result, so every history has
 * tool-call pairs for the history check (every call answered once), and a step committed twice would show as extra
 * messages.
 */
export const MODEL_STEPS_GRAPH = 'model-steps';

export interface StepCaller {
  runId: string;
  step: number;
  pid: number;
}

const PROMPT = /^run=(\S+) step=(\d+) pid=(\d+)$/;

export function stepPrompt({ runId, step, pid }: StepCaller): string {
  return `run=${runId} step=${step} pid=${pid}`;
}

/** The caller named by a `model-steps` prompt; undefined for any other text. */
export function parseStepPrompt(text: string): StepCaller | undefined {
  const match = PROMPT.exec(text);
  return match ? { runId: match[1]!, step: Number(match[2]), pid: Number(match[3]) } : undefined;
}

export const modelStepsGraph = defineGraph({
  name: MODEL_STEPS_GRAPH,
  version: '1',
  input: z.object({ steps: z.number().int().min(1).max(100) }).strict(),
  state: { steps: channel.replace(0), next: channel.replace(0), visited: channel.append<number>() },
  initialState: (input) => ({ steps: input.steps, next: 0 }),
  output: (state) => ({ visited: state.visited }),
})
  .node(
    'step',
    async (state, context) => {
      const prompt = stepPrompt({ runId: context.runId, step: state.next, pid: process.pid });
      const call = await callLanguageModel(context, { messages: [{ role: 'user', content: prompt }] });
      const results: Message[] = (call.message.tool_calls ?? []).map((toolCall) => ({
        role: 'tool',
        tool_call_id: toolCall.id,
        content: `noted step ${state.next}`,
      }));
      return { visited: state.next, next: state.next + 1, messages: [call.message, ...results] };
    },
    { retry: { maxAttempts: 5, initialDelayMs: 200, maxDelayMs: 5000 } },
  )
  .edge(START, 'step')
  .route('step', (state) => (state.next < state.steps ? 'step' : END), ['step', END])
  .build();
