import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import type { Config } from '../../shared/config/config.js';
import { readSse, type SseFrame } from '../helpers/api-sse.js';
import { API_KEYS_ENV, bearer, KEYS } from '../helpers/api-test-env.js';
import { tcpConnectionsTo } from '../helpers/process-sockets.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { atScale } from '../helpers/suite-scale.js';
import { eventually, testConfig } from '../helpers/test-env.js';

/**
 * Attack: open many Server-Sent Event streams (each used to hold a blocking Redis
 * connection of its own: 400 streams → 426 Redis clients, 832 API file descriptors). Expected answer:
 * the streams share the API's multiplexed reader, so the Redis connections the API holds do not grow
 * with the streams — and every stream still gets its run's live events and its end; past
 * AGENTQ_SSE_TENANT_MAX_STREAMS a tenant's next stream answers 429 naming the limit while another
 * tenant's still opens. 100 streams in `npm test`, 400 in `npm run test:security`.
 */
const STREAMS = atScale(100, 400);

describe('SSE streams on bounded Redis connections (issue 35 item 6)', () => {
  let config: Config;
  let app: ApiInstance;
  let client: AgentClient;
  let url = '';
  let redisPort = 0;

  beforeAll(async () => {
    config = testConfig({
      AGENTQ_API_KEYS: API_KEYS_ENV,
      AGENTQ_RATE_LIMIT_PER_MINUTE: '0',
      AGENTQ_TENANT_MAX_INFLIGHT: '0',
      AGENTQ_SSE_TENANT_MAX_STREAMS: String(STREAMS),
    });
    redisPort = Number(new URL(config.redisUrl!).port);
    client = new AgentClient({ config });
    app = await createApi({ config, client, logger: createLogger('silent') });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    await client?.close();
  });

  /** A run no worker takes: its stream stays open until the test cancels it. */
  const queuedRun = async (key: string) => {
    const response = await fetch(`${url}/v1/runs?queueUnserved=true`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ graph: 'chain', input: { steps: 1 } }),
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };

  it(`${STREAMS} open streams hold a fixed number of Redis connections, get their live events and end`, async () => {
    const runs: string[] = [];
    for (let index = 0; index < STREAMS; index += 1) runs.push(await queuedRun(KEYS.acmeProducer));
    const globexRun = await queuedRun(KEYS.globexProducer);
    const before = tcpConnectionsTo(redisPort);
    const opened = await Promise.all(
      runs.map((runId) => fetch(`${url}/v1/runs/${runId}/events`, { headers: bearer(KEYS.acmeProducer) })),
    );
    expect(opened.map((response) => response.status).filter((status) => status !== 200)).toEqual([]);
    const reading = opened.map((response) =>
      readSse(response.body!, (frames) => frames.some((frame) => frame.event === 'run-end')),
    );

    // A live event reaches every stream (the multiplexed reader wakes for runs it did not follow yet).
    for (const runId of runs)
      await client.store.eventLog.addEvent(runId, 'step-start', { node: 'probe', stepIndex: 0 });
    const during = tcpConnectionsTo(redisPort);
    recordFigure({
      scenario: 'sse connections',
      name: `redis_connections_added_by_${STREAMS}_streams`,
      value: during - before,
      goal: '<= 2',
    });
    // One blocking reader (and at most one connection for the wake-ups) whatever the number of streams.
    expect(during - before).toBeLessThanOrEqual(2);

    // The tenant's limit is reached: its next stream is refused, another tenant's opens.
    const refused = await fetch(`${url}/v1/runs/${runs[0]}/events`, { headers: bearer(KEYS.acmeProducer) });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({
      error: { code: 'RATE_LIMITED', message: expect.stringMatching(/AGENTQ_SSE_TENANT_MAX_STREAMS=/) },
    });
    const other = new AbortController();
    const globex = await fetch(`${url}/v1/runs/${globexRun}/events`, {
      headers: bearer(KEYS.globexProducer),
      signal: other.signal,
    });
    expect(globex.status).toBe(200);
    other.abort();

    // Cancelling ends each run: every stream sees its live event, then run-end, and closes.
    for (const runId of runs)
      expect(
        (await fetch(`${url}/v1/runs/${runId}`, { method: 'DELETE', headers: bearer(KEYS.acmeProducer) })).status,
      ).toBe(200);
    const frames: SseFrame[][] = await Promise.all(reading);
    const incomplete = frames.filter(
      (stream) => !stream.some((frame) => frame.event === 'step-start') || stream.at(-1)?.event !== 'run-end',
    );
    expect(incomplete.length).toBe(0);
    // Nothing is held once the streams are gone (but the one pub/sub connection of live tokens, kept by design).
    await eventually(async () => tcpConnectionsTo(redisPort) <= before + 1, 10_000, 'the reader to close');
  }, 120_000);
});
