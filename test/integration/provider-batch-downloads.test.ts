import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startScriptedOpenAIServer,
  type ScriptedChatRequest,
  type ScriptedOpenAIServer,
} from '../fakes/scripted-openai-server.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { answerAsProviderBatch, providerBatchEnv } from '../helpers/answer-as-provider-batch.js';
import { twoTurnGraph } from '../helpers/two-turn-graph.js';

/** How long the collector asks again for a finished provider batch's results (AGENTQ_PROVIDER_BATCH_RESULTS_WAIT_MS). */
const RESULTS_WAIT_MS = 4000;

/**
 * A finished provider batch whose results cannot be downloaded keeps its provider batch: the download is
 * tried again with a growing delay and the runs wait on that same batch; only past the bound do they
 * fail, never resubmitted. Counted on the scripted server (batches created, files uploaded).
 */
/** Each answer repeats the last message it was asked about. */
function echoLastMessage(request: ScriptedChatRequest) {
  const last = (request.body.messages as { content: string }[]).at(-1)?.content ?? '';
  return { content: `re: ${last}`, usage: { prompt_tokens: 10, completion_tokens: 2 } };
}

describe('provider batches: a results download that fails', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      script: echoLastMessage,
      batchApi: { validatingMs: 50, processingMs: 100 },
    });
    env = await startTestEnv({
      graphs: [twoTurnGraph()],
      env: providerBatchEnv(server.url, { AGENTQ_PROVIDER_BATCH_RESULTS_WAIT_MS: String(RESULTS_WAIT_MS) }),
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  const answer = (questions: string[]) => answerAsProviderBatch(env, questions);

  /** What the scripted server counted since `before`. */
  function countsSince(before: ReturnType<NonNullable<ScriptedOpenAIServer['batchApi']>['counts']>) {
    const now = server.batchApi!.counts();
    return {
      batchesCreated: now.batchesCreated - before.batchesCreated,
      filesUploaded: now.filesUploaded - before.filesUploaded,
      downloadsRefused: now.downloadsRefused - before.downloadsRefused,
    };
  }

  it.each([
    {
      what: '406 with a body (the contract-holding server)',
      status: 406,
      body: JSON.stringify({ title: 'Not Acceptable', status: 406, detail: 'Unable to find content' }),
    },
    { what: '503 with a text body', status: 503, body: 'storage unavailable' },
    { what: 'the connection dropped', status: 0, body: undefined },
  ])(
    'the download fails 3 times ($what): one provider batch per model turn, the runs complete with the right answers',
    async ({ status, body }) => {
      const before = server.batchApi!.counts();
      server.batchApi!.configure({ failDownloads: { times: 3, status, ...(body ? { body } : {}) } });
      try {
        const { batch, results } = await answer(['first question', 'second question']);
        expect(batch.progress).toMatchObject({ total: 2, completed: 2, failed: 0 });
        // Two model turns, two provider batches (and two input files), whatever the download did meanwhile.
        expect(countsSince(before)).toEqual({ batchesCreated: 2, filesUploaded: 2, downloadsRefused: 3 });
        expect(results.map((result) => result.answer)).toEqual(['re: Now say it better.', 're: Now say it better.']);
        const run = await env.client.get(results[0]!.runId);
        expect(run?.status).toBe('completed');
        // Each step ran once per call: no step failed and was retried for the download.
        const events = await env.client.store.eventLog.events(results[0]!.runId);
        expect(events.filter((event) => event.type === 'step-retry')).toEqual([]);
      } finally {
        server.batchApi!.configure({ failDownloads: undefined });
      }
    },
  );

  it('a provider that refuses to show a created batch for a while (404 on its status) is polled again: the same provider batch answers', async () => {
    const before = server.batchApi!.counts();
    let refusals = 0;
    server.batchApi!.configure({
      fault: (route) =>
        route === 'batches.retrieve' && ++refusals <= 3 ? { status: 404, message: 'No batch found' } : undefined,
    });
    try {
      const { batch } = await answer(['shy 1', 'shy 2']);
      expect(batch.progress).toMatchObject({ total: 2, completed: 2, failed: 0 });
      expect(refusals).toBeGreaterThan(3);
      expect(countsSince(before)).toMatchObject({ batchesCreated: 2, filesUploaded: 2 });
    } finally {
      server.batchApi!.configure({ fault: undefined });
    }
  });

  it('a download that never succeeds fails the runs past the bound (PROVIDER_BATCH_RESULTS_UNAVAILABLE, the provider batch named), with one provider batch and no resubmission', async () => {
    const before = server.batchApi!.counts();
    const created = server.batchApi!.batches.length;
    const body = JSON.stringify({ title: 'Not Acceptable', status: 406, detail: 'no representation for you' });
    server.batchApi!.configure({ failDownloads: { times: 1_000_000, status: 406, body } });
    try {
      const started = Date.now();
      const { batch, results } = await answer(['never 1', 'never 2']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(RESULTS_WAIT_MS);
      // The agentq batch ended (every run of it ended); its runs failed.
      expect(batch.status).toBe('completed');
      expect(batch.progress).toMatchObject({ total: 2, completed: 0, failed: 2 });
      const providerBatch = server.batchApi!.batches[created]!.id;
      for (const result of results) {
        const run = await env.client.get(result.runId);
        expect(run?.status).toBe('failed');
        expect(run?.error).toMatchObject({
          code: 'PROVIDER_BATCH_RESULTS_UNAVAILABLE',
          retryable: false,
          message: expect.stringContaining(`provider batch ${providerBatch}: its results could not be downloaded`),
          details: { providerBatch },
        });
        // The server's answer is in the message, not "(no body)".
        expect(run?.error?.message).toContain('no representation for you');
        const events = await env.client.store.eventLog.events(result.runId);
        expect(events.filter((event) => event.type === 'step-retry')).toEqual([]);
      }
      // Tried again and again with a growing delay, on the same provider batch: never a second one.
      const counted = countsSince(before);
      expect(counted).toMatchObject({ batchesCreated: 1, filesUploaded: 1 });
      expect(counted.downloadsRefused).toBeGreaterThanOrEqual(3);
      expect(counted.downloadsRefused).toBeLessThanOrEqual(8);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(countsSince(before)).toMatchObject({ batchesCreated: 1, filesUploaded: 1 });
    } finally {
      server.batchApi!.configure({ failDownloads: undefined });
    }
  });
});
