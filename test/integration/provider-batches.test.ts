import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { answerAsProviderBatch, providerBatchEnv } from '../helpers/answer-as-provider-batch.js';
import { twoTurnGraph } from '../helpers/two-turn-graph.js';

/** A batch's model calls through the provider's Batch API, against the scripted server's Batch API. */
describe('provider batches: model calls through the Batch API', () => {
  const asked = new Map<string, number>();
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    // Each answer repeats the last user message, so a test sees which turn answered what; questions
    // naming a fault get it ('fail-once': a 500 the first time, 'bad-request': a 400 every time).
    server = await startScriptedOpenAIServer({
      script: (request) => {
        const messages = request.body.messages as { role: string; content: string }[];
        const last = messages.at(-1)?.content ?? '';
        const seen = (asked.get(last) ?? 0) + 1;
        asked.set(last, seen);
        if (last.includes('fail-once') && seen === 1) return { status: 500, message: 'upstream hiccup' };
        if (last.includes('bad-request'))
          return { status: 400, code: 'invalid_value', message: 'messages[0] is not allowed here' };
        return { content: `re: ${last}`, usage: { prompt_tokens: 100, completion_tokens: 10 } };
      },
      batchApi: { validatingMs: 50, processingMs: 200 },
    });
    env = await startTestEnv({
      graphs: [twoTurnGraph()],
      env: providerBatchEnv(server.url, { AGENTQ_PRICES: 'scripted-chat:2:8' }),
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  const answer = (questions: string[], options: { concurrency?: number } = {}) =>
    answerAsProviderBatch(env, questions, options);

  /** The provider batches created from now on (the fake keeps them all). */
  function createdSince(before: number) {
    return server.batchApi!.batches.slice(before);
  }

  it('a two-turn agent: no live call, one provider batch per turn (not per question), answers saved and used', async () => {
    const questions = Array.from({ length: 6 }, (_, index) => ({ question: `question ${index}` }));
    const { batch } = await env.client.batches.submit({
      collection: 'docs',
      questions,
      options: { graph: 'two-turns' },
      providerBatch: true,
    });
    expect(batch.concurrency).toBe(6);
    const done = await eventually(
      async () => {
        const record = await env.client.batches.get(batch.id);
        return record?.status === 'completed' && record;
      },
      30_000,
      'the batch to complete',
    );
    expect(done.progress).toMatchObject({ total: 6, completed: 6, failed: 0 });
    // Every model call went through the Batch API: no live chat request at all.
    expect(server.chatRequests()).toHaveLength(0);
    // Two turns, two provider batches of 6 requests each: every run waited for its first answer before its second call.
    expect(server.batchApi!.batches.map((created) => created.lines.length)).toEqual([6, 6]);
    expect(done.providerBatch?.batches.map((entry) => [entry.status, entry.requests])).toEqual([
      ['completed', 6],
      ['completed', 6],
    ]);
    expect(done.providerBatch?.parked).toBe(0);
    // 12 answers of 100 + 10 tokens: at batch prices (half of 2 and 8 USD per 1M) beside live prices.
    expect(done.providerBatch?.usage).toEqual({ inputTokens: 1200, outputTokens: 120 });
    expect(done.providerBatch?.liveCostUsd).toBeCloseTo((1200 * 2 + 120 * 8) / 1e6, 12);
    expect(done.providerBatch?.costUsd).toBeCloseTo((1200 * 2 + 120 * 8) / 2e6, 12);
    const results = (await env.client.batches.results(batch.id))!;
    expect(results.map((result) => result.answer)).toEqual(questions.map(() => 're: Now say it better.'));
    // The second turn asked about the first turn's answer, and each request carries its run, step and call.
    const second = server.batchApi!.batches[1]!.lines;
    expect(second.map((line) => (line.body.messages as { content: string }[])[1]!.content).sort()).toEqual(
      questions.map((question) => `re: ${question.question}`).sort(),
    );
    expect(second.map((line) => line.custom_id).sort()).toEqual(
      results.map((result) => `${result.runId}|s1.t0|model|1`).sort(),
    );
    // The run records the usage at batch prices; the tenant's budget counts each answer once.
    const run = await env.client.get(results[0]!.runId);
    expect(run?.usage).toMatchObject({ inputTokens: 200, outputTokens: 20 });
    expect(run?.usage.costUsd).toBeCloseTo((200 * 2 + 20 * 8) / 2e6, 12);
    const { month } = await env.client.budgets.usage({ tenant: 'default' });
    expect(month).toMatchObject({ tokens: 1320, calls: 12 });
    expect(month.costUsd).toBeCloseTo((1200 * 2 + 120 * 8) / 2e6, 6);
  });

  it('a tenant whose budget cannot cover a call is refused before the call is parked (TENANT_BUDGET_EXCEEDED)', async () => {
    await env.client.budgets.setLimits({ tokensPerDay: 1 }, { tenant: 'poor' });
    const before = server.batchApi!.batches.length;
    const { batch } = await env.client.batches.submit(
      { questions: [{ question: 'too dear' }], options: { graph: 'two-turns' }, providerBatch: true },
      { tenant: 'poor' },
    );
    const done = await eventually(async () => {
      const record = await env.client.batches.get(batch.id);
      return record && record.status !== 'running' ? record : undefined;
    }, 20_000);
    expect(done.progress).toMatchObject({ failed: 1 });
    expect((await env.client.batches.results(batch.id))![0]!.error?.code).toBe('TENANT_BUDGET_EXCEEDED');
    expect(server.batchApi!.batches.length).toBe(before);
    expect(done.providerBatch?.pending).toBe(0);
  });

  it('an error line fails only its step, retried by the node policy in a later provider batch; a 4xx fails its run with the provider message', async () => {
    const before = server.batchApi!.batches.length;
    const { batch, results } = await answer(['fine 1', 'fail-once 2', 'bad-request 3', 'fine 4']);
    expect(batch.progress).toMatchObject({ completed: 3, failed: 1 });
    expect(results.map((result) => result.status)).toEqual(['completed', 'completed', 'failed', 'completed']);
    expect(results[2]!.error?.code).toBe('PROVIDER_ERROR');
    expect(results[2]!.error?.message).toMatch(
      /answered this model call with an error \(HTTP 400 invalid_value\): messages\[0\] is not allowed here/,
    );
    // The 500 was retried as attempt 2 of its step, in another provider batch than the first.
    const ids = createdSince(before).map((created) => created.lines.map((line) => line.custom_id));
    const retried = `${results[1]!.runId}|s0.t0|model|2`;
    const firstWith = ids.findIndex((lines) => lines.includes(`${results[1]!.runId}|s0.t0|model|1`));
    expect(ids.findIndex((lines) => lines.includes(retried))).toBeGreaterThan(firstWith);
    expect(server.chatRequests()).toHaveLength(0);
    // Retried by hand once its batch is over: nothing collects for that batch any more, so it calls live.
    await env.client.retry(results[2]!.runId);
    const again = await env.client.wait(results[2]!.runId, { timeoutMs: 20_000 });
    expect(again.error?.message).toMatch(/HTTP 400.*messages\[0\] is not allowed here/);
    expect(server.chatRequests().length).toBeGreaterThan(0);
  });

  it('an expired provider batch: what it answered is kept, the rest goes in a new provider batch', async () => {
    const before = server.batchApi!.batches.length;
    server.batchApi!.configure({
      outcome: (_batch, index) => (index === before ? { status: 'expired', answered: 2 } : { status: 'completed' }),
    });
    try {
      const { batch } = await answer(['exp 1', 'exp 2', 'exp 3', 'exp 4']);
      expect(batch.progress).toMatchObject({ completed: 4, failed: 0 });
      const created = createdSince(before);
      expect(created[0]!.status).toBe('expired');
      // The two unanswered first turns went again (with the answered runs' second turns), never dropped.
      expect(created.map((entry) => entry.lines.length)).toEqual([4, 4, 2]);
      const again = created[1]!.lines.map((line) => line.custom_id);
      expect(again).toEqual(expect.arrayContaining(created[0]!.lines.slice(2).map((line) => line.custom_id)));
      expect(again.filter((id) => id.includes('|s0.t0|'))).toHaveLength(2);
      expect(batch.providerBatch?.batches.map((entry) => entry.status)).toEqual(['expired', 'completed', 'completed']);
    } finally {
      server.batchApi!.configure({ outcome: undefined });
    }
  });

  it('a results file with a malformed line, an unknown custom_id and a missing answer: only the missing one is asked again', async () => {
    const before = server.batchApi!.batches.length;
    server.batchApi!.configure({
      outputFile: (lines, created) =>
        server.batchApi!.batches.indexOf(created) === before
          ? [
              ...lines.slice(1),
              '{not json',
              JSON.stringify({ custom_id: 'bat_nobody.i9|s0.t0|model|1', response: { status_code: 200, body: {} } }),
            ].join('\n')
          : lines.join('\n'),
    });
    try {
      const { batch, results } = await answer(['file 1', 'file 2', 'file 3']);
      expect(batch.progress).toMatchObject({ completed: 3, failed: 0 });
      const created = createdSince(before);
      const dropped = created[0]!.lines[0]!.custom_id;
      // The request whose answer was missing was asked again as the step's next attempt; nothing else was.
      const firstTurns = created
        .slice(1)
        .flatMap((entry) => entry.lines.map((line) => line.custom_id))
        .filter((id) => id.includes('|s0.t0|'));
      expect(firstTurns).toEqual([dropped.replace(/\|1$/, '|2')]);
      expect(results.every((result) => result.answer?.startsWith('re: '))).toBe(true);
      const flush = await env.client.store.redis.hget(
        env.client.store.keys.providerBatch(batch.id).flush(`${batch.id}.f1`),
        'problems',
      );
      expect(JSON.parse(flush!)).toEqual([
        expect.stringMatching(/line 3: not JSON/),
        expect.stringMatching(/custom_id 'bat_nobody.i9\|s0.t0\|model\|1', which is not a request of this batch/),
      ]);
    } finally {
      server.batchApi!.configure({ outputFile: undefined });
    }
  });

  it('the provider unreachable while polling, and a results download failing: backs off, keeps polling, then applies', async () => {
    let retrieves = 0;
    let downloads = 0;
    server.batchApi!.configure({
      fault: (route) => {
        if (route === 'batches.retrieve' && ++retrieves <= 3) return { status: 503, message: 'provider down' };
        if (route === 'files.content' && ++downloads <= 2) return { status: 502, message: 'bad gateway' };
        return undefined;
      },
    });
    try {
      const { batch } = await answer(['poll 1', 'poll 2']);
      expect(batch.progress).toMatchObject({ completed: 2, failed: 0 });
      expect(retrieves).toBeGreaterThan(3);
      expect(downloads).toBeGreaterThan(2);
    } finally {
      server.batchApi!.configure({ fault: undefined });
    }
  });

  it('a provider that fails the upload and the create for a while is asked again later; one that refuses them fails the calls, never a stuck run', async () => {
    let uploads = 0;
    let creates = 0;
    server.batchApi!.configure({
      fault: (route) => {
        if (route === 'files.create' && ++uploads <= 2) return { status: 502, message: 'bad gateway' };
        if (route === 'batches.create' && ++creates <= 2) return { status: 500, message: 'try later' };
        return undefined;
      },
    });
    try {
      const { batch } = await answer(['flaky 1', 'flaky 2']);
      expect(batch.progress).toMatchObject({ completed: 2, failed: 0 });
      expect([uploads, creates]).toEqual([4, 4]); // 2 failures then 1 success, for each of the 2 turns' flushes
    } finally {
      server.batchApi!.configure({ fault: undefined });
    }
    const before = server.batchApi!.batches.length;
    server.batchApi!.configure({
      fault: (route) =>
        route === 'batches.create'
          ? { status: 400, code: 'invalid_model', message: 'model not available for batch' }
          : undefined,
    });
    try {
      const { batch, results } = await answer(['refused 1', 'refused 2']);
      expect(batch.progress).toMatchObject({ failed: 2 });
      expect(results[0]!.error?.message).toMatch(
        /the provider refused the provider batch of this model call: .*HTTP 400.*model not available for batch/,
      );
      expect(server.batchApi!.batches.length).toBe(before);
      expect(batch.providerBatch?.batches[0]?.status).toBe('refused');
    } finally {
      server.batchApi!.configure({ fault: undefined });
    }
  });

  it('while its calls wait, a run holds no worker slot and no job lock, and the reconciler leaves it alone', async () => {
    server.batchApi!.configure({ processingMs: 3000 });
    try {
      const { batch } = await env.client.batches.submit({
        collection: 'docs',
        questions: ['wait 1', 'wait 2', 'wait 3'].map((question) => ({ question })),
        options: { graph: 'two-turns' },
        providerBatch: true,
      });
      const record = await eventually(
        async () => {
          const current = await env.client.batches.get(batch.id);
          return current?.providerBatch?.batches[0]?.status === 'in_progress' && current;
        },
        10_000,
        'the provider batch in progress',
      );
      expect(record.providerBatch?.parked).toBe(3);
      const results = (await env.client.batches.results(batch.id))!;
      const queue = env.queue('agentq-steps', results[0]!.runId);
      const jobs = await Promise.all(results.map((result) => queue.getJob(`${result.runId}.s0.t0`)));
      expect(await Promise.all(jobs.map((job) => job!.getState()))).toEqual(['delayed', 'delayed', 'delayed']);
      expect(await queue.getActiveCount()).toBe(0);
      expect((await env.worker.sweep()).requeued).toBe(0);
      const events = await env.client.store.eventLog.events(results[0]!.runId);
      expect(events.find((event) => event.type === 'step-parked')?.data).toMatchObject({
        node: 'draft',
        waitingOn: { providerBatch: { batch: batch.id, request: `${results[0]!.runId}|s0.t0|model|1` } },
      });
      await eventually(async () => (await env.client.batches.get(batch.id))?.status === 'completed', 20_000);
    } finally {
      server.batchApi!.configure({ processingMs: 200 });
    }
  });

  it('cancelling the batch cancels its provider batch and ends its waiting runs at once', async () => {
    server.batchApi!.configure({ processingMs: 60_000 });
    const before = server.batchApi!.batches.length;
    try {
      const { batch } = await env.client.batches.submit({
        collection: 'docs',
        questions: ['cancel 1', 'cancel 2'].map((question) => ({ question })),
        options: { graph: 'two-turns' },
        providerBatch: true,
      });
      await eventually(
        async () => (await env.client.batches.get(batch.id))?.providerBatch?.batches[0]?.status === 'in_progress',
        10_000,
      );
      const startedAt = Date.now();
      await env.client.batches.cancel(batch.id);
      const settled = await eventually(
        async () => {
          const current = await env.client.batches.get(batch.id);
          return current?.progress.cancelled === 2 && current;
        },
        10_000,
        'the runs cancelled',
      );
      expect(Date.now() - startedAt).toBeLessThan(10_000);
      await eventually(
        async () => server.batchApi!.batches[before]?.status === 'cancelled',
        10_000,
        'the provider batch cancelled',
      );
      await eventually(
        async () => (await env.client.batches.get(batch.id))?.providerBatch?.batches[0]?.status === 'cancelled',
        10_000,
      );
      expect(settled.status).toBe('cancelled');
    } finally {
      server.batchApi!.configure({ processingMs: 200 });
    }
  });
});

describe('provider batches: a provider without the Batch API', () => {
  let server: ScriptedOpenAIServer;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ script: () => ({ content: 'live answer' }), batchApi: false });
  });
  afterAll(async () => server?.close());

  it('refuses the batch at submission with a message that says so: nothing is submitted', async () => {
    const env = await startTestEnv({
      graphs: [twoTurnGraph()],
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' },
    });
    try {
      const submitting = env.client.batches.submit({
        questions: [{ question: 'q' }],
        options: { graph: 'two-turns' },
        providerBatch: true,
      });
      await expect(submitting).rejects.toMatchObject({
        code: 'PROVIDER_BATCH_UNSUPPORTED',
        message: expect.stringMatching(
          /has no Batch API \(it answered 404 on \/v1\/batches\).*AGENTQ_PROVIDER_BATCH_FALLBACK=live/,
        ),
      });
      expect(await env.client.store.redis.keys(`${env.config.keyPrefix}:{batch:*`)).toEqual([]);
    } finally {
      await env.close();
    }
  });

  it('with AGENTQ_PROVIDER_BATCH_FALLBACK=live, runs it live instead', async () => {
    const env = await startTestEnv({
      graphs: [twoTurnGraph()],
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', AGENTQ_PROVIDER_BATCH_FALLBACK: 'live' },
    });
    try {
      const before = server.chatRequests().length;
      const { batch } = await env.client.batches.submit({
        questions: [{ question: 'q' }],
        options: { graph: 'two-turns' },
        providerBatch: true,
      });
      expect(batch.providerBatch).toBeUndefined();
      await eventually(async () => (await env.client.batches.get(batch.id))?.status === 'completed', 20_000);
      expect(server.chatRequests().length - before).toBe(2);
    } finally {
      await env.close();
    }
  });
});
