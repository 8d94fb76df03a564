import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { WEBHOOK_QUEUE } from '../../shared/contracts/queues.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { deliverWebhook, WebhookAddressError } from '../../worker/operations/webhooks/deliver-webhook.js';
import { isPublicAddress } from '../../worker/runtime/public-address.js';
import { verifyWebhookSignature } from '../../worker/operations/webhooks/webhook-signature.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/api-webhook-receiver.js';
import { eventually } from '../helpers/test-env.js';

const SECRET = 'acme-webhook-secret-for-tests';

const approval = defineGraph({ name: 'approval', state: { verdict: channel.replace('') } })
  .node('ask', (_state, context) => ({ verdict: String(context.interrupt<string>({ question: 'ok?' })) }))
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

describe('webhooks', () => {
  let env: ApiTestEnv;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver([500, 200]);
    env = await startApiTestEnv({
      graphs: [approval],
      env: {
        AGENTQ_WEBHOOK_ALLOW_PRIVATE: 'true',
        AGENTQ_WEBHOOK_SECRETS: `acme:${SECRET}`,
        AGENTQ_WEBHOOK_BACKOFF_MS: '200',
      },
    });
  });
  afterAll(async () => {
    await env?.close();
    await receiver?.close();
  });

  it('POSTs the finished run record, signed with the tenant secret, and retries with backoff after a 500', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'chain', input: { steps: 2 }, webhookUrl: receiver.url },
    });
    expect(created.statusCode).toBe(202);
    const runId = json(created).id as string;
    await eventually(async () => receiver.received.length >= 2, 15_000, 'two deliveries');
    const [first, second] = receiver.received as [(typeof receiver.received)[0], (typeof receiver.received)[0]];
    // First answered 500, retried after the backoff (200 ms, BullMQ's exponential).
    expect(second.at - first.at).toBeGreaterThanOrEqual(150);
    const record = json<RunRecord>(await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${runId}` }));
    expect(record.status).toBe('completed');
    for (const delivery of [first, second]) {
      expect(JSON.parse(delivery.body)).toEqual(record);
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.headers['x-agentq-event']).toBe('run-end');
      expect(delivery.headers['x-agentq-run-id']).toBe(runId);
      const timestamp = String(delivery.headers['x-agentq-timestamp']);
      expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
      // HMAC-SHA256 over `<timestamp>.<raw body>`, computed here independently of the product's code.
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${delivery.body}`).digest('hex')}`;
      expect(delivery.headers['x-agentq-signature']).toBe(expected);
      expect(verifyWebhookSignature({ secret: SECRET, body: delivery.body, timestamp, signature: expected })).toBe(
        true,
      );
      expect(
        verifyWebhookSignature({ secret: 'another-secret', body: delivery.body, timestamp, signature: expected }),
      ).toBe(false);
      expect(
        verifyWebhookSignature({ secret: SECRET, body: `${delivery.body} `, timestamp, signature: expected }),
      ).toBe(false);
    }
    expect(
      verifyWebhookSignature({
        secret: SECRET,
        body: first.body,
        timestamp: String(first.headers['x-agentq-timestamp']),
        signature: String(first.headers['x-agentq-signature']),
        now: Date.now() + 3600_000,
      }),
    ).toBe(false);
    // The receiver answered before the worker marked the delivery job completed: read until it has.
    const job = await eventually(
      async () => {
        const found = await env.queue(WEBHOOK_QUEUE).getJob(`${runId}.webhook`);
        return (await found?.getState()) === 'completed' && found;
      },
      15_000,
      'the webhook job to complete',
    );
    expect(job.data).toEqual({ runId, status: 'completed' });
    expect(job.attemptsMade).toBe(2);
  });

  it('sends one for a run the API cancels itself (the client side of the run-finished hook)', async () => {
    const before = receiver.received.length;
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'approval', input: null, webhookUrl: receiver.url },
    });
    const runId = json(created).id as string;
    await eventually(async () => (await env.client.get(runId))?.status === 'waiting');
    const cancelled = await env.as(KEYS.acmeProducer, { method: 'DELETE', url: `/v1/runs/${runId}` });
    expect(json(cancelled)).toMatchObject({ status: 'cancelled' });
    await eventually(
      async () => receiver.received.slice(before).some((delivery) => delivery.headers['x-agentq-run-id'] === runId),
      15_000,
      'the delivery',
    );
    const delivery = receiver.received
      .slice(before)
      .find((candidate) => candidate.headers['x-agentq-run-id'] === runId)!;
    expect(JSON.parse(delivery.body)).toMatchObject({ id: runId, status: 'cancelled', error: { code: 'CANCELLED' } });
  });
});

describe('webhook addresses and secrets', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver([200]);
  });
  afterAll(async () => receiver?.close());

  it('refuses loopback, private and link-local addresses, also after DNS resolution, unless allowed', async () => {
    const port = new URL(receiver.url).port;
    const attempt = (url: string, allowPrivate: boolean) =>
      deliverWebhook({ url, body: '{}', headers: {}, timeoutMs: 2000, allowPrivate });
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      `http://[::1]:${port}/`,
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.1/',
      'http://[::ffff:127.0.0.1]/',
    ]) {
      await expect(attempt(url, false), url).rejects.toBeInstanceOf(WebhookAddressError);
    }
    await expect(attempt(`http://localhost:${port}/`, false)).rejects.toThrow(
      /resolves to 127\.0\.0\.1.*AGENTQ_WEBHOOK_ALLOW_PRIVATE=true/,
    );
    expect(receiver.received).toHaveLength(0);
    await expect(attempt(`http://localhost:${port}/`, true)).resolves.toBe(200);
    expect(['8.8.8.8', '2606:4700:4700::1111'].every(isPublicAddress)).toBe(true);
    expect(
      ['192.168.1.1', '172.16.0.1', '100.64.0.1', 'fd00::1', 'fe80::1', '0.0.0.0', 'not-an-ip'].some(isPublicAddress),
    ).toBe(false);
  });

  it('fails the delivery job for good, with the reason, when the address is private or the tenant has no secret', async () => {
    const env = await startApiTestEnv({
      env: { AGENTQ_WEBHOOK_SECRETS: `acme:${SECRET}`, AGENTQ_WEBHOOK_BACKOFF_MS: '50' },
    });
    const deliveredBefore = receiver.received.length;
    try {
      const refused = json(
        await env.as(KEYS.acmeProducer, {
          method: 'POST',
          url: '/v1/runs',
          payload: { graph: 'chain', input: { steps: 1 }, webhookUrl: receiver.url },
        }),
      ).id as string;
      const unsigned = json(
        await env.as(KEYS.globexProducer, {
          method: 'POST',
          url: '/v1/runs',
          payload: { graph: 'chain', input: { steps: 1 }, webhookUrl: receiver.url },
        }),
      ).id as string;
      const queue = env.queue(WEBHOOK_QUEUE);
      const failure = async (runId: string) =>
        eventually(
          async () => {
            // The state first, then the job: a job read before its failure was written has no failedReason yet.
            if ((await queue.getJobState(`${runId}.webhook`)) !== 'failed') return undefined;
            return queue.getJob(`${runId}.webhook`);
          },
          15_000,
          `the webhook job of ${runId} to fail`,
        );
      const [refusedJob, unsignedJob] = await Promise.all([failure(refused), failure(unsigned)]);
      expect(refusedJob.failedReason).toMatch(/127\.0\.0\.1, a private, loopback or link-local address; refused/);
      expect(refusedJob.attemptsMade).toBe(1);
      expect(unsignedJob.failedReason).toMatch(
        /no webhook secret for tenant 'globex': set AGENTQ_WEBHOOK_SECRETS=globex:<secret>/,
      );
      expect(receiver.received).toHaveLength(deliveredBefore);
    } finally {
      await env.close();
    }
  });
});
