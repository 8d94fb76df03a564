import {
  startScriptedOpenAIServer,
  type RequestOutcome,
  type ScriptedOpenAIServer,
} from '../fakes/scripted-openai-server.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { parseStepPrompt, type StepCaller } from './workers-killed-graph.js';

/** One model request of a `model-steps` run, as the scripted server saw it. */
export interface StepCall extends StepCaller {
  receivedAt: number;
  /** When the answer was sent; undefined while pending or when the caller went away first. */
  answeredAt: number | undefined;
  outcome: RequestOutcome;
}

export interface ModelStepsServer {
  readonly server: ScriptedOpenAIServer;
  /** Every request, in arrival order. */
  calls(): StepCall[];
  /** The requests for one step of one run, in arrival order. */
  callsOf(runId: string, step: number): StepCall[];
  /** Requests beyond the first for the same (run, step), summed over all steps. */
  duplicateCalls(): number;
  close(): Promise<void>;
}

export interface ModelStepsServerOptions {
  seed: number;
  /** Each answer waits a seeded uniform time in [min, max] ms. */
  latencyMs: readonly [number, number];
  /** Requests for which this returns true never get an answer (the step stays mid-call until its worker dies). */
  hold?: (caller: StepCaller) => boolean;
}

/**
 * The scripted OpenAI-compatible server answering `model-steps` prompts: each answer carries one tool
 * call whose id names the step, and waits a latency drawn from the seed and the (run, step, request)
 * — so a seed replays the same latencies whatever order requests arrive in.
 */
export async function startModelStepsServer({
  seed,
  latencyMs: [min, max],
  hold,
}: ModelStepsServerOptions): Promise<ModelStepsServer> {
  const seen = new Map<string, number>();
  const server = await startScriptedOpenAIServer({
    script: (request) => {
      const caller = callerOf(request.body.messages);
      if (!caller) return { status: 400, message: 'not a model-steps prompt' };
      if (hold?.(caller)) return { hang: true };
      const key = `${caller.runId}/${caller.step}`;
      const nth = seen.get(key) ?? 0;
      seen.set(key, nth + 1);
      const delayMs = Math.round(min + seededRandom(seed, `${key}/${nth}`)() * (max - min));
      return {
        delayMs,
        content: `answer s${caller.step}`,
        toolCalls: [{ id: `call_s${caller.step}`, name: 'note', arguments: { step: caller.step } }],
      };
    },
  });
  const calls = (): StepCall[] =>
    server.chatRequests().flatMap((request) => {
      const caller = callerOf(request.body.messages);
      return caller
        ? [{ ...caller, receivedAt: request.receivedAt, answeredAt: request.answeredAt, outcome: request.outcome }]
        : [];
    });
  return {
    server,
    calls,
    callsOf: (runId, step) => calls().filter((call) => call.runId === runId && call.step === step),
    duplicateCalls() {
      const perStep = new Map<string, number>();
      for (const call of calls())
        perStep.set(`${call.runId}/${call.step}`, (perStep.get(`${call.runId}/${call.step}`) ?? 0) + 1);
      return [...perStep.values()].reduce((sum, count) => sum + count - 1, 0);
    },
    close: () => server.close(),
  };
}

function callerOf(messages: readonly unknown[]): StepCaller | undefined {
  const last = messages.at(-1) as { content?: unknown } | undefined;
  return typeof last?.content === 'string' ? parseStepPrompt(last.content) : undefined;
}
