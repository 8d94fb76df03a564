import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backoffDelay } from '../../shared/graph/retry-policy.js';
import type { RunEvent, RunRecord, StepRecord } from '../../shared/contracts/run-record.js';
import { reactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import {
  startScriptedOpenAIServer,
  type ScriptedChatRequest,
  type ScriptedOpenAIServer,
  type ScriptedResponse,
} from '../fakes/scripted-openai-server.js';
import { atScale, suiteSeed } from '../helpers/suite-scale.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { gapsBetween, queryOf, scriptPerQuery } from './model-endpoint-script.js';

const SCENARIO = 'model endpoint faults';
/** Runs that meet each fault pattern at once (each with its own scripted answers). */
const RUNS = atScale(1, 6);
const TIMEOUT_MS = 500;
/** The retry policy under test: the react-agent `model` step's own, so the bounds follow it if it changes. */
const policy = reactAgentGraph.nodes.get('model')!.retry;
/** The shortest and longest wait the policy allows after failed attempt `attempt` (jitter at its ends). */
const least = (attempt: number) => backoffDelay(policy, attempt, () => 0);
const most = (attempt: number) => backoffDelay(policy, attempt, () => 1);

interface PatternRun {
  record: RunRecord;
  requests: ScriptedChatRequest[];
  gaps: number[];
  steps: StepRecord[];
  retries: RunEvent[];
}

/**
 * Scenario 4 of the fault suite: the model endpoint misbehaves (429 with and without Retry-After,
 * 5xx, hangs, `context_length_exceeded`) under the whole path: real openai SDK (maxRetries 0) →
 * AgentqError (docs/reference/errors.md) → step processor → BullMQ backoff or parking. Each test asserts the exact
 * number of requests the server saw and lower bounds on the gaps between them derived from the
 * policy (Retry-After honoured; backoff ≥ its jitter floor). Upper bounds are recorded as figures,
 * not asserted: a loaded machine only ever makes gaps longer.
 */
describe('fault suite: model endpoint misbehaving', () => {
  const seed = suiteSeed();
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    console.log(
      `${SCENARIO}: seed=${seed}, ${RUNS} run(s) per fault pattern, policy ${JSON.stringify({ ...policy, retryOn: undefined })}`,
    );
    server = await startScriptedOpenAIServer();
    env = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', AGENTQ_LLM_TIMEOUT_MS: String(TIMEOUT_MS) },
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  /** Runs RUNS react-agent runs at once, each answered by `script`; returns what each one saw. */
  async function runPattern(name: string, script: ScriptedResponse[]): Promise<PatternRun[]> {
    const queries = Array.from({ length: RUNS }, (_, index) => `${name} #${index} (seed ${seed})`);
    server.reset();
    server.setScript(scriptPerQuery(new Map(queries.map((query) => [query, script]))));
    const queued = await Promise.all(
      queries.map((query) => env.client.enqueue({ graph: 'react-agent', input: { query, tools: [] } })),
    );
    const records = await Promise.all(queued.map((run) => env.client.wait(run.id, { timeoutMs: 60_000 })));
    return Promise.all(
      records.map(async (record, index) => {
        const requests = server.chatRequests().filter((request) => queryOf(request) === queries[index]);
        const retries: RunEvent[] = [];
        for await (const event of env.client.events(record.id)) if (event.type === 'step-retry') retries.push(event);
        return { record, requests, gaps: gapsBetween(requests), steps: await env.client.steps(record.id), retries };
      }),
    );
  }

  /** Records the gaps of all runs as one figure: per gap, the range seen and the range the policy allows. */
  function recordGaps(name: string, runs: PatternRun[], allowed: [number, number][]): void {
    const seen = allowed.map((_, gap) => runs.map((run) => run.gaps[gap]!));
    const range = (values: number[]) =>
      Math.min(...values) === Math.max(...values) ? `${values[0]}` : `${Math.min(...values)}–${Math.max(...values)}`;
    recordFigure({
      scenario: SCENARIO,
      name: `${name}_gaps_ms`,
      value: seen.map(range).join(', '),
      goal: allowed
        .map(([low, high]) => (high === Infinity ? `≥ ${low}` : `≥ ${low} (policy ${low}–${high})`))
        .join(', '),
    });
    recordFigure({
      scenario: SCENARIO,
      name: `${name}_requests_per_run`,
      value: range(runs.map((run) => run.requests.length)),
      goal: `= ${allowed.length + 1}`,
    });
  }

  const errorOf = (event: RunEvent) => event.data.error as { code: string; retryable: boolean; message: string };

  it('429 with Retry-After: 1, three times, then 200: four requests ≥ 1 s apart, no attempt spent', async () => {
    const limited = { status: 429, retryAfter: 1 };
    const runs = await runPattern('429 retry-after', [limited, limited, limited, { content: 'finally' }]);
    recordGaps(
      '429_retry_after_1s',
      runs,
      [1000, 1000, 1000].map((ms) => [ms, Infinity]),
    );
    for (const run of runs) {
      expect(run.record).toMatchObject({ status: 'completed', output: { answer: 'finally' } });
      expect(run.requests).toHaveLength(4);
      for (const gap of run.gaps) expect(gap).toBeGreaterThanOrEqual(1000);
      expect(run.steps.map((step) => [step.node, step.attempts])).toEqual([['model', 1]]);
      expect(run.retries.map((event) => [event.data.parkedMs, errorOf(event).code])).toEqual([
        [1000, 'RATE_LIMITED'],
        [1000, 'RATE_LIMITED'],
        [1000, 'RATE_LIMITED'],
      ]);
    }
  });

  it('429 with retry-after-ms more times than maxAttempts: each one parks, none spends an attempt', async () => {
    const parks = policy.maxAttempts + 1;
    const runs = await runPattern('429 retry-after-ms', [
      ...Array.from({ length: parks }, () => ({ status: 429, headers: { 'retry-after-ms': '300' } })),
      { content: 'ok' },
    ]);
    recordGaps(
      '429_retry_after_ms_300',
      runs,
      Array.from({ length: parks }, () => [300, Infinity]),
    );
    for (const run of runs) {
      expect(run.record.status).toBe('completed');
      expect(run.requests).toHaveLength(parks + 1);
      for (const gap of run.gaps) expect(gap).toBeGreaterThanOrEqual(300);
      expect(run.steps[0]?.attempts).toBe(1);
      expect(run.retries.map((event) => event.data.parkedMs)).toEqual(Array.from({ length: parks }, () => 300));
    }
  });

  it('5xx on every attempt: exactly maxAttempts requests, gaps growing as the backoff says, then the run fails', async () => {
    const failures: ScriptedResponse[] = Array.from({ length: policy.maxAttempts }, (_, index) => ({
      status: [500, 503, 502][index % 3]!,
    }));
    const runs = await runPattern('5xx always', [...failures, { content: 'never asked' }]);
    const allowed = Array.from({ length: policy.maxAttempts - 1 }, (_, index): [number, number] => [
      least(index + 1),
      most(index + 1),
    ]);
    recordGaps('5xx_until_attempts_spent', runs, allowed);
    for (const run of runs) {
      expect(run.requests).toHaveLength(policy.maxAttempts);
      run.gaps.forEach((gap, index) =>
        expect(gap, `gap after attempt ${index + 1}`).toBeGreaterThanOrEqual(allowed[index]![0]),
      );
      expect(run.record).toMatchObject({
        status: 'failed',
        error: { code: 'PROVIDER_ERROR', retryable: true, node: 'model', attempt: policy.maxAttempts },
      });
      expect(run.record.error?.message).toMatch(/HTTP 50[023]/);
      expect(run.retries.map((event) => [event.data.attempt, errorOf(event).code])).toEqual(
        allowed.map((_, index) => [index + 1, 'PROVIDER_ERROR']),
      );
    }
  });

  it('500 then 503 then 200: three requests, backoff between them, two attempts spent', async () => {
    const runs = await runPattern('5xx recovers', [{ status: 500 }, { status: 503 }, { content: 'recovered' }]);
    const allowed: [number, number][] = [1, 2].map((attempt) => [least(attempt), most(attempt)]);
    recordGaps('5xx_then_200', runs, allowed);
    for (const run of runs) {
      expect(run.record).toMatchObject({ status: 'completed', output: { answer: 'recovered' } });
      expect(run.requests).toHaveLength(3);
      run.gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(allowed[index]![0]));
      expect(run.steps[0]?.attempts).toBe(3);
      expect(run.retries.map((event) => errorOf(event).code)).toEqual(['PROVIDER_ERROR', 'PROVIDER_ERROR']);
    }
  });

  it('429 without Retry-After retries with backoff and spends attempts', async () => {
    const runs = await runPattern('429 bare', [{ status: 429 }, { status: 429 }, { content: 'ok' }]);
    const allowed: [number, number][] = [1, 2].map((attempt) => [least(attempt), most(attempt)]);
    recordGaps('429_without_retry_after', runs, allowed);
    for (const run of runs) {
      expect(run.record.status).toBe('completed');
      expect(run.requests).toHaveLength(3);
      run.gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(allowed[index]![0]));
      expect(run.steps[0]?.attempts).toBe(3);
      expect(run.retries.map((event) => [event.data.parkedMs, errorOf(event).code])).toEqual([
        [undefined, 'RATE_LIMITED'],
        [undefined, 'RATE_LIMITED'],
      ]);
    }
  });

  it('a hang is aborted at AGENTQ_LLM_TIMEOUT_MS, then retried with backoff', async () => {
    const runs = await runPattern('hang', [{ hang: true }, { hang: true }, { content: 'awake' }]);
    const allowed: [number, number][] = [1, 2].map((attempt) => [TIMEOUT_MS + least(attempt), Infinity]);
    recordGaps('hang_timeout_500ms', runs, allowed);
    for (const run of runs) {
      expect(run.record).toMatchObject({ status: 'completed', output: { answer: 'awake' } });
      expect(run.requests.map((request) => request.outcome)).toEqual(['aborted', 'aborted', 'answered']);
      run.gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(allowed[index]![0]));
      expect(run.steps[0]?.attempts).toBe(3);
      expect(run.retries).toHaveLength(2);
      for (const event of run.retries) {
        expect(errorOf(event)).toMatchObject({ code: 'TIMEOUT', retryable: true });
        expect(errorOf(event).message).toMatch(new RegExp(`within ${TIMEOUT_MS} ms \\(AGENTQ_LLM_TIMEOUT_MS\\)`));
      }
    }
  });

  it('429 with Retry-After, then 500, then a hang, then 200: parking spends no attempt, the backoff counts from 1', async () => {
    const runs = await runPattern('mixed', [
      { status: 429, retryAfter: 1 },
      { status: 500 },
      { hang: true },
      { content: 'done' },
    ]);
    const allowed: [number, number][] = [
      [1000, Infinity],
      [least(1), most(1)],
      [TIMEOUT_MS + least(2), Infinity],
    ];
    recordGaps('mixed_429_500_hang', runs, allowed);
    for (const run of runs) {
      expect(run.record).toMatchObject({ status: 'completed', output: { answer: 'done' } });
      expect(run.requests).toHaveLength(4);
      run.gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(allowed[index]![0]));
      expect(run.steps[0]?.attempts).toBe(3);
      expect(run.retries.map((event) => [event.data.attempt, errorOf(event).code])).toEqual([
        [1, 'RATE_LIMITED'],
        [1, 'PROVIDER_ERROR'],
        [2, 'TIMEOUT'],
      ]);
    }
  });

  it('a 400 context_length_exceeded fails the run at once with the provider message and code: one request, no retry', async () => {
    const runs = await runPattern('context length', [
      { status: 400, code: 'context_length_exceeded' },
      { content: 'never' },
    ]);
    recordFigure({
      scenario: SCENARIO,
      name: 'context_length_exceeded_requests_per_run',
      value: Math.max(...runs.map((run) => run.requests.length)),
      goal: '= 1',
    });
    for (const run of runs) {
      expect(run.record).toMatchObject({
        status: 'failed',
        error: {
          code: 'PROVIDER_ERROR',
          retryable: false,
          node: 'model',
          attempt: 1,
          details: { status: 400, code: 'context_length_exceeded' },
        },
      });
      expect(run.record.error?.message).toMatch(/HTTP 400\): This model's maximum context length is 8192 tokens/);
      expect(run.requests).toHaveLength(1);
      expect(run.retries).toEqual([]);
    }
  });
});
