import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { BatchRequest } from '../../shared/operations/batches/batch-schema.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { providerBatchEnv } from '../helpers/answer-as-provider-batch.js';
import { twoTurnGraph } from '../helpers/two-turn-graph.js';

/**
 * A batch with a deadline or a budget is planned: the cheapest allowed mode that meets them, a flex refusal
 * sent on as the plan says, a budget refused at submission or stopped while running. Each test is its own
 * tenant, so the averages one measures do not move another's plan.
 */
describe('batch autopilot: deadline, budget and the plan', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  /** Flex requests answered per question (by its first user message), and how each refuses flex. */
  const flexSeen = new Map<string, number>();
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      script: (request) => {
        const messages = request.body.messages as { role: string; content: string }[];
        const first = messages[0]?.content ?? '';
        const last = messages.at(-1)?.content ?? '';
        if (request.body.service_tier === 'flex') {
          const seen = (flexSeen.get(first) ?? 0) + 1;
          flexSeen.set(first, seen);
          // OpenAI's answer to a flex request it has no capacity for.
          if (first.includes('flex-refused') || (first.includes('flex-once') && seen === 1))
            return { status: 429, code: 'resource_unavailable', message: 'Resource unavailable; retry later.' };
        }
        // 'dear' questions cost 100 000 prompt tokens a call: far more than the plan's assumed 3 000 a question.
        const prompt = first.includes('dear') ? 100_000 : 100;
        // A warm-up question's first call answers slowly: others sent beside it would arrive before it answered.
        const delayMs = first.startsWith('warm') && messages.length === 1 ? 300 : 0;
        return { content: `re: ${last}`, usage: { prompt_tokens: prompt, completion_tokens: 10 }, delayMs };
      },
      batchApi: { validatingMs: 20, processingMs: 100 },
    });
    env = await startTestEnv({
      graphs: [twoTurnGraph()],
      env: providerBatchEnv(server.url, {
        AGENTQ_PRICES: 'scripted-chat:2:8',
        AGENTQ_AUTOPILOT_CALLS: '2',
        AGENTQ_AUTOPILOT_LIVE_LATENCY_MS: '1000',
        AGENTQ_AUTOPILOT_FLEX_SLOWDOWN: '3',
      }),
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  const submit = (tenant: string, questions: string[], extra: Partial<BatchRequest> = {}, idempotencyKey?: string) =>
    env.client.batches.submit(
      {
        collection: 'docs',
        questions: questions.map((question) => ({ question })),
        options: { graph: 'two-turns' },
        ...extra,
      },
      { tenant, ...(idempotencyKey ? { idempotencyKey } : {}) },
    );

  const finished = (batchId: string) =>
    eventually(
      async () => {
        const record = await env.client.batches.get(batchId);
        return record && record.status !== 'running' ? record : undefined;
      },
      30_000,
      `batch ${batchId} to finish`,
    );

  it('a far deadline plans the provider batch, a near one live; the estimate and the usage are on the record', async () => {
    const batchesBefore = server.batchApi!.batches.length;
    const far = await submit('ap-far', ['far 1', 'far 2', 'far 3'], { deadline: '2d', budgetUsd: 5 });
    expect(far.batch.autopilot).toMatchObject({ budgetUsd: 5, modes: ['live', 'batch'], plan: { mode: 'batch' } });
    expect(far.batch.autopilot!.plan.reason).toMatch(/cheapest mode that meets the deadline.*assumed/);
    const farDone = await finished(far.batch.id);
    expect(farDone.progress).toMatchObject({ completed: 3, failed: 0 });
    expect(server.batchApi!.batches.length).toBeGreaterThan(batchesBefore);
    // 6 answers of 100 + 10 tokens at batch prices (half of 2 and 8 USD per 1M).
    expect(farDone.usage).toMatchObject({
      inputTokens: 600,
      outputTokens: 60,
      cachedInputTokens: 0,
      calls: { live: 0, flex: 0, batch: 6 },
    });
    expect(farDone.usage.costUsd).toBeCloseTo((600 * 2 + 60 * 8) / 2e6, 10);
    expect(farDone.usage.uncachedCostUsd).toBeCloseTo(farDone.usage.costUsd, 10);

    const liveBefore = server.chatRequests().length;
    const near = await submit('ap-near', ['near 1', 'near 2'], { deadline: '30s' });
    // A provider batch is assumed to take an hour a call: only live finishes in 30 s.
    expect(near.batch.autopilot).toMatchObject({
      deadline: expect.any(String),
      budgetUsd: null,
      plan: { mode: 'live' },
    });
    expect(Date.parse(near.batch.autopilot!.estimate.finishAt)).toBeLessThanOrEqual(
      Date.parse(near.batch.autopilot!.deadline!),
    );
    const nearDone = await finished(near.batch.id);
    expect(nearDone.progress).toMatchObject({ completed: 2 });
    expect(nearDone.usage.calls).toEqual({ live: 4, flex: 0, batch: 0 });
    expect(server.chatRequests().length - liveBefore).toBe(4);

    // The next plan of the far tenant starts from what its first batch measured.
    const again = await submit('ap-far', ['far 4'], { deadline: '2d' });
    expect(again.batch.autopilot!.plan.reason).toMatch(/110 in \+ 10 out tokens.*measured|measured/);
    await finished(again.batch.id);
  });

  it('a budget no mode fits is refused at submission with the estimate, and nothing is created', async () => {
    const refusal = await submit('ap-poor', ['a', 'b', 'c'], { budgetUsd: 0.000001 }, 'poor-1').catch(
      (error: unknown) => error,
    );
    expect(AgentqError.isInstance(refusal) && refusal.code).toBe('BUDGET_EXCEEDED');
    expect((refusal as Error).message).toMatch(
      /estimated at \$0\.\d+ .*over its budget of \$0\.000001; raise budgetUsd/,
    );
    // The same idempotency key creates the batch now: the refusal left nothing behind.
    const { created, batch } = await submit('ap-poor', ['a', 'b', 'c'], { budgetUsd: 10 }, 'poor-1');
    expect(created).toBe(true);
    await finished(batch.id);
  });

  it('a flex refusal goes live when the deadline needs it, and is retried on flex when there is time', async () => {
    const tight = await submit('ap-flex', ['flex-refused 1', 'flex-refused 2'], {
      deadline: '10s',
      modes: ['live', 'flex'],
    });
    // Flex (6 s) meets 10 s at half the price, but uses more than half of it: a refusal goes live.
    expect(tight.batch.autopilot!.plan.mode).toBe('flex');
    const tightDone = await finished(tight.batch.id);
    expect(tightDone.progress).toMatchObject({ completed: 2 });
    expect(tightDone.usage.calls).toEqual({ live: 4, flex: 0, batch: 0 });
    const asked = server.chatRequests().filter((request) => JSON.stringify(request.body).includes('flex-refused'));
    expect(asked.filter((request) => request.body.service_tier === 'flex')).toHaveLength(4);
    expect(asked.filter((request) => request.body.service_tier === undefined)).toHaveLength(4);

    const loose = await submit('ap-flex-2', ['flex-once 1'], { deadline: '6h', modes: ['live', 'flex'] });
    expect(loose.batch.autopilot!.plan.mode).toBe('flex');
    const looseDone = await finished(loose.batch.id);
    expect(looseDone.progress).toMatchObject({ completed: 1 });
    const once = server.chatRequests().filter((request) => JSON.stringify(request.body).includes('flex-once'));
    // Refused once, retried on flex: never live.
    expect(once.map((request) => request.body.service_tier)).toEqual(['flex', 'flex', 'flex']);
    // Calls sent, by mode: the refused one too.
    expect(looseDone.usage.calls).toEqual({ live: 0, flex: 3, batch: 0 });
  });

  it('warm-up: one question first, the others once its first model call answered (its prompt prefix is cached)', async () => {
    const questions = ['warm 1', 'warm 2', 'warm 3', 'warm 4'];
    const { batch } = await submit('ap-warm', questions, { options: { graph: 'two-turns', concurrency: 4 } });
    const done = await finished(batch.id);
    expect(done.progress).toMatchObject({ completed: 4 });
    const firsts = server
      .chatRequests()
      .filter((request) => (request.body.messages as { content: string }[]).length === 1)
      .filter((request) => (request.body.messages as { content: string }[])[0]!.content.startsWith('warm'));
    expect(firsts).toHaveLength(4);
    const [leader, ...rest] = [...firsts].sort((a, b) => a.receivedAt - b.receivedAt);
    expect(leader!.body.messages).toEqual([{ role: 'user', content: 'warm 1' }]);
    // Every other question's first request left after the leader's answer came back.
    for (const request of rest) expect(request.receivedAt).toBeGreaterThanOrEqual(leader!.answeredAt!);
    // Then they went together: the cap is the batch's concurrency again, not one at a time.
    expect(Math.max(...rest.map((request) => request.receivedAt))).toBeLessThan(
      Math.min(...rest.map((request) => request.answeredAt!)),
    );
  });

  it('a running batch that would pass its budget stops: every question says what happened to it', async () => {
    const questions = Array.from({ length: 5 }, (_, index) => `dear ${index + 1}`);
    const { batch } = await submit('ap-dear', questions, {
      budgetUsd: 0.5,
      modes: ['live'],
      options: { graph: 'two-turns', concurrency: 1 },
    });
    expect(batch.autopilot!.plan.mode).toBe('live');
    const done = await finished(batch.id);
    // Each call costs 0.2 USD, where the plan assumed 0.005: the first question (2 calls) and the second's
    // first call were sent while spent + held stayed within 0.5 (the third passed it once answered), then none.
    expect(done.progress).toMatchObject({ total: 5, completed: 1, failed: 4 });
    expect(done.autopilot!.stopped).toMatchObject({ reason: 'budget', left: { questions: 4, budgetUsd: 0 } });
    const results = (await env.client.batches.results(batch.id))!;
    expect(results.map((result) => result.status)).toEqual(['completed', 'failed', 'failed', 'failed', 'failed']);
    for (const result of results.slice(1)) {
      expect(result.error?.code).toBe('BUDGET_EXCEEDED');
      expect(result.error?.message).toMatch(/budget of \$0\.5/);
    }
    expect(results[1]!.error?.message).toMatch(/was not sent/);
    expect(results[4]!.error?.message).toMatch(/was not asked/);
    // What was paid is kept: the second question's first answer is in its run.
    expect((await env.client.get(results[1]!.runId))?.usage.inputTokens).toBe(100_000);
    expect(done.usage.calls.live).toBe(3);
    expect(done.usage.costUsd).toBeCloseTo((3 * (100_000 * 2 + 10 * 8)) / 1e6, 6);
  });
});

describe('batch autopilot: re-planning a slow provider batch', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let holding = true;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      script: (request) => {
        const messages = request.body.messages as { role: string; content: string }[];
        return { content: `re: ${messages.at(-1)?.content}`, usage: { prompt_tokens: 100, completion_tokens: 10 } };
      },
      // The first provider batch stays in progress while the test holds it: a provider going slower than assumed.
      batchApi: { validatingMs: 20, processingMs: 50, hold: (_batch, index) => index === 0 && holding },
    });
    env = await startTestEnv({
      graphs: [twoTurnGraph()],
      env: providerBatchEnv(server.url, {
        AGENTQ_PRICES: 'scripted-chat:2:8',
        AGENTQ_AUTOPILOT_CALLS: '2',
        AGENTQ_AUTOPILOT_LIVE_LATENCY_MS: '500',
        AGENTQ_AUTOPILOT_BATCH_TURNAROUND_MS: '1000',
        // Two calls a provider batch: of three parked calls, one waits unsent for the next.
        AGENTQ_PROVIDER_BATCH_MAX_REQUESTS: '2',
      }),
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  it('a provider batch slower than the deadline allows: its unsent calls go live, the sent ones are kept', async () => {
    const { batch } = await env.client.batches.submit(
      {
        collection: 'docs',
        questions: ['slow 1', 'slow 2', 'slow 3'].map((question) => ({ question })),
        options: { graph: 'two-turns' },
        deadline: '12s',
        modes: ['live', 'batch'],
      },
      { tenant: 'ap-replan' },
    );
    // Two turns of an assumed 1 s provider batch meet 12 s at half the price.
    expect(batch.autopilot!.plan.mode).toBe('batch');
    const replanned = await eventually(
      async () => {
        const record = await env.client.batches.get(batch.id);
        return record?.autopilot?.plan.mode === 'live' && record;
      },
      20_000,
      'the batch to re-plan to live',
    );
    expect(replanned.autopilot!.plan.reason).toMatch(/^re-planned from batch: a provider batch has been running \d+ s/);
    // The unsent third call went live while the first provider batch was still out.
    expect(server.batchApi!.batches).toHaveLength(1);
    expect(server.batchApi!.batches[0]!.lines).toHaveLength(2);
    await eventually(async () => server.chatRequests().length >= 1, 10_000, 'the released call to be sent live');
    holding = false;
    const done = await eventually(
      async () => {
        const record = await env.client.batches.get(batch.id);
        return record && record.status !== 'running' ? record : undefined;
      },
      30_000,
      'the batch to finish',
    );
    expect(done.progress).toMatchObject({ completed: 3, failed: 0 });
    // The two answers of the provider batch were used, not asked again: 1 + 3 second turns live.
    expect(server.batchApi!.batches).toHaveLength(1);
    expect(server.chatRequests()).toHaveLength(4);
    expect(done.usage.calls).toEqual({ live: 4, flex: 0, batch: 2 });
    const results = (await env.client.batches.results(batch.id))!;
    expect(results.map((result) => result.answer)).toEqual([
      're: Now say it better.',
      're: Now say it better.',
      're: Now say it better.',
    ]);
  });
});
