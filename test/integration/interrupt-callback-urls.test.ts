import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { interruptCallback } from '../../worker/engine/waits/interrupt-callback.js';
import { bearer, KEYS, type ApiTestEnv } from '../helpers/api-test-env.js';
import { startListeningApiEnv } from '../helpers/listening-api.js';
import { eventually } from '../helpers/test-env.js';

const SECRET = 'interrupt-callback-secret-0123456789abcdef';

/** `approver`: one node that asks for approval with a callback URL (working `input.timeoutMs`), and outputs the answer. */
const approver = defineGraph({
  name: 'approver',
  input: undefined,
  state: { timeoutMs: channel.replace<number>(60_000), answer: channel.replace<unknown>(null) },
  initialState: (input: unknown) => ({ timeoutMs: (input as { timeoutMs: number }).timeoutMs }),
  output: (state) => state.answer,
})
  .node('approve', (state, context) => ({
    answer: context.interrupt({ type: 'approval' }, { callback: { timeoutMs: state.timeoutMs } }),
  }))
  .edge(START, 'approve')
  .edge('approve', END)
  .build();

describe('interrupts that hand out callback URLs (context.interrupt(request, { callback }))', () => {
  let env: ApiTestEnv;
  let base: string;
  beforeAll(async () => {
    ({ env, base } = await startListeningApiEnv((address) => ({
      graphs: [approver],
      env: { AGENTQ_CALLBACK_SECRET: SECRET, AGENTQ_PUBLIC_URL: address },
    })));
  });
  afterAll(async () => env.close());

  /** A POST with no API key, over HTTP. */
  const post = (url: string, body: unknown) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const codeOf = async (answer: Response) => ((await answer.json()) as { error: { code: string } }).error.code;
  /** The run as `GET /v1/runs/:id` answers it, over HTTP with the tenant's key. */
  const getRun = async (runId: string) =>
    (await (await fetch(`${base}/v1/runs/${runId}`, { headers: bearer(KEYS.acmeProducer) })).json()) as RunRecord;

  async function waitingRun(timeoutMs: number): Promise<{ id: string; url: string; expiresAt: string }> {
    const created = await fetch(`${base}/v1/runs`, {
      method: 'POST',
      headers: { ...bearer(KEYS.acmeProducer), 'content-type': 'application/json' },
      body: JSON.stringify({ graph: 'approver', input: { timeoutMs } }),
    });
    const { id } = (await created.json()) as { id: string };
    const run = await eventually(async () => {
      const got = await getRun(id);
      return got.status === 'waiting' ? got : undefined;
    });
    return { id, url: run.interrupt!.callbackUrl!, expiresAt: run.interrupt!.callbackExpiresAt! };
  }

  it('the URL is in the run, its run-waiting event and answers the interrupt without a key, once', async () => {
    const { id, url, expiresAt } = await waitingRun(60_000);
    expect(url.startsWith(`${base}/v1/callbacks/`)).toBe(true);
    expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    const waitingEvent = (await env.client.store.eventLog.events(id)).find((event) => event.type === 'run-waiting');
    expect(waitingEvent?.data).toMatchObject({ node: 'approve', callbackUrl: url, callbackExpiresAt: expiresAt });

    // Not the resume body: refused, nothing changes.
    const wrong = await post(url, { approved: true });
    expect(wrong.status).toBe(400);
    expect(await codeOf(wrong)).toBe('INVALID_INPUT');
    expect((await getRun(id)).status).toBe('waiting');

    const first = await post(url, { value: { approved: true, by: 'ann' } });
    expect(first.status).toBe(202);
    expect(await first.json()).toEqual({ runId: id, waitId: expect.stringMatching(/^s\d+\.t\d+:i$/) });
    const done = await env.client.wait(id);
    expect(done.status).toBe('completed');
    expect(done.output).toEqual({ approved: true, by: 'ann' });

    const second = await post(url, { value: { approved: false } });
    expect(second.status).toBe(409);
    expect(await codeOf(second)).toBe('CALLBACK_USED');
    const after = await getRun(id);
    expect(after.status).toBe('completed');
    expect(after.output).toEqual({ approved: true, by: 'ann' });
  });

  it('a resume through the API first makes the URL answer CALLBACK_USED', async () => {
    const { id, url } = await waitingRun(60_000);
    const resumed = await fetch(`${base}/v1/runs/${id}/resume`, {
      method: 'POST',
      headers: { ...bearer(KEYS.acmeProducer), 'content-type': 'application/json' },
      body: JSON.stringify({ value: 'by api' }),
    });
    expect(resumed.status).toBe(202);
    // Used at once, while the run still runs its answered step, and after it finished.
    const early = await post(url, { value: 'by url' });
    expect(early.status).toBe(409);
    expect(await codeOf(early)).toBe('CALLBACK_USED');
    expect((await env.client.wait(id)).output).toBe('by api');
    const late = await post(url, { value: 'by url' });
    expect(await codeOf(late)).toBe('CALLBACK_USED');
    expect((await getRun(id)).output).toBe('by api');
  });

  it('a tampered URL is refused as invalid and the interrupt stays open', async () => {
    const { id, url } = await waitingRun(60_000);
    const flipAt = url.length - 3;
    const tampered = url.slice(0, flipAt) + (url[flipAt] === 'A' ? 'B' : 'A') + url.slice(flipAt + 1);
    const answer = await post(tampered, { value: 'forged' });
    expect(answer.status).toBe(401);
    expect(await codeOf(answer)).toBe('CALLBACK_INVALID');
    const still = await getRun(id);
    expect(still.status).toBe('waiting');
    expect(still.interrupt?.callbackUrl).toBe(url);
    expect((await post(url, { value: 'real' })).status).toBe(202);
    expect((await env.client.wait(id)).output).toBe('real');
  });

  it('an expired URL answers CALLBACK_EXPIRED; the interrupt stays open and the API resume still works', async () => {
    const { id, url, expiresAt } = await waitingRun(200);
    await eventually(async () => Date.now() > Date.parse(expiresAt) + 10);
    const answer = await post(url, { value: 'late' });
    expect(answer.status).toBe(410);
    expect(await codeOf(answer)).toBe('CALLBACK_EXPIRED');
    expect((await getRun(id)).status).toBe('waiting');
    await env.client.resume(id, 'by api after expiry');
    expect((await env.client.wait(id)).output).toBe('by api after expiry');
  });

  it('a re-run of the interrupting step hands out the same URL (its expiry is fixed at the first ask)', async () => {
    const { id, url, expiresAt } = await waitingRun(60_000);
    const run = await getRun(id);
    const again = await interruptCallback({
      store: env.client.store,
      runId: id,
      tenant: run.tenant,
      stepId: run.interrupt!.stepId,
      timeoutMs: 120_000,
      signing: { secret: SECRET, baseUrl: base },
    });
    expect(again).toEqual({ callbackUrl: url, callbackExpiresAt: expiresAt });
  });
});
