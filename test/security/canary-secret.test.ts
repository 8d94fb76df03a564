import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Redis } from 'ioredis';
import { redisNodes, type RedisConnection } from '../../shared/redis/connect-redis.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/telemetry/logger.js';
import { agentqQueueNames } from '../../producer/api/agentq-queue-names.js';
import { startTelemetry, type Telemetry } from '../../shared/telemetry/telemetry.js';
import { API_KEYS_ENV, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { multipart } from '../helpers/multipart-body.js';
import { startRagTestEnv, type RagTestEnv } from '../helpers/rag-fixtures.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually } from '../helpers/test-env.js';
import { obedientModel } from './obedient-model.js';

/**
 * A canary secret placed in an API key, in a document's text and in a run's prompt, with telemetry on
 * (every span kept in memory) and content capture off (AGENTQ_TRACE_CONTENT unset), worker and API
 * logging at debug level into memory. After the document is uploaded, searched and chatted about, and
 * a react-agent run whose prompt makes the model pass the canary to a tool, the canary must appear
 * nowhere in: spans, logs, BullMQ's keys (job data, options, return values, failure reasons, event
 * streams), the run store's keys other than a run's own (`{s<k>}:run:*`) and the document store
 * (`{docs:*}`), where content legitimately lives, and Bull Board's API.
 */
const CANARY = `cnry${randomBytes(10).toString('hex')}`;
const CANARY_KEY = `key-${CANARY}`;

/** Everything under `prefix` in Redis as text, key by key (key names included). */
/** Every key matching `pattern` with its value as text: SCAN runs per node (a Cluster's keys are spread over its masters). */
async function dumpKeys(
  connection: RedisConnection,
  pattern: string,
  skip: (key: string) => boolean,
): Promise<Map<string, string>> {
  const dump = new Map<string, string>();
  for (const redis of await redisNodes(connection)) await dumpNodeKeys(redis, pattern, skip, dump);
  return dump;
}

async function dumpNodeKeys(
  redis: Redis,
  pattern: string,
  skip: (key: string) => boolean,
  dump: Map<string, string>,
): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', '500');
    cursor = next;
    for (const key of keys) {
      if (skip(key)) continue;
      const type = await redis.type(key);
      const value =
        type === 'hash'
          ? await redis.hgetall(key)
          : type === 'string'
            ? await redis.get(key)
            : type === 'list'
              ? await redis.lrange(key, '0', '-1')
              : type === 'set'
                ? await redis.smembers(key)
                : type === 'zset'
                  ? await redis.zrange(key, '0', '-1')
                  : type === 'stream'
                    ? await redis.xrange(key, '-', '+')
                    : `(${type})`;
      dump.set(key, `${key} ${JSON.stringify(value)}`);
    }
  } while (cursor !== '0');
}

const spanText = (span: ReadableSpan): string =>
  JSON.stringify({
    name: span.name,
    attributes: span.attributes,
    events: span.events,
    status: span.status,
    links: span.links,
    resource: span.resource.attributes,
  });

describe('canary secret: never in spans, logs, job data or the dashboard API with content capture off', () => {
  const data = tempDirectory('agentq-canary-');
  const exporter = new InMemorySpanExporter();
  const logLines: string[] = [];
  let telemetry: Telemetry;
  let rag: RagTestEnv<ApiTestEnv>;

  beforeAll(async () => {
    telemetry = await startTelemetry({ exporter });
    const logs = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString());
        done();
      },
    });
    rag = await startRagTestEnv(
      (options) =>
        startApiTestEnv({
          ...options,
          telemetry,
          logger: createLogger('debug', { role: 'worker' }, logs),
          api: { logger: createLogger('debug', { role: 'api' }, logs) },
          env: {
            ...options.env,
            AGENTQ_API_KEYS: `${API_KEYS_ENV},${CANARY_KEY}:acme:producer`,
            AGENTQ_LOG_LEVEL: 'debug',
            AGENTQ_CHAT_WAIT_MS: '30000',
          },
        }),
      data.path,
      { model: { script: obedientModel } },
    );
    const { env } = rag;
    const as = (options: Parameters<ApiTestEnv['as']>[1]) => env.as(CANARY_KEY, options);

    // The document: uploaded over HTTP, indexed by the worker, found by a search.
    const upload = multipart({ collection: 'canary' }, [
      {
        name: 'vault.txt',
        content: `Vault access procedure.\n\nThe vault code word is ${CANARY} and it opens the vault.\n`,
      },
    ]);
    const uploaded = await as({ method: 'POST', url: '/v1/documents', ...upload });
    expect(uploaded.statusCode, uploaded.body).toBe(202);
    const batchId = (JSON.parse(uploaded.body) as { batchId: string }).batchId;
    await eventually(
      async () => {
        const progress = await as({ method: 'GET', url: `/v1/documents/batches/${batchId}` });
        return (JSON.parse(progress.body) as { finished?: boolean }).finished === true;
      },
      60_000,
      'the canary document to be indexed',
    );
    const search = await as({
      method: 'POST',
      url: '/v1/search',
      payload: { query: 'vault code word', collection: 'canary' },
    });
    expect(search.body).toContain(CANARY);

    // A chat over it: the passage with the canary goes to the model, the answer cites it.
    const chat = await as({
      method: 'POST',
      url: '/v1/agent/chat',
      payload: { query: `What opens the vault, is it ${CANARY}?`, collection: 'canary' },
    });
    expect(chat.statusCode, chat.body).toBe(200);

    // A prompt: the obedient model passes the canary to a tool, whose error then names it.
    const prompt = `Remember ${CANARY}. CALL TOOL calculator {"expression":"2+${CANARY}"} END`;
    const created = await as({
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'react-agent', input: { query: prompt, tools: ['calculator'] } },
    });
    expect(created.statusCode, created.body).toBe(202);
    const runId = (JSON.parse(created.body) as { id: string }).id;
    const done = await env.client.wait(runId, { timeoutMs: 60_000 });
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const events = await as({ method: 'GET', url: `/v1/runs/${runId}/events` });
    expect(events.statusCode).toBe(200);
    // A wrong key that carries the canary too.
    expect(
      (await env.app.inject({ method: 'GET', url: '/v1/runs', headers: { authorization: `Bearer ${CANARY_KEY}x` } }))
        .statusCode,
    ).toBe(401);
    await telemetry.flush();
  });
  afterAll(async () => {
    await rag?.close();
    await telemetry?.shutdown();
    data.remove();
  });

  it('the canary reached the model and the run store (where content belongs), so the scans below can find it', async () => {
    const chatBodies = rag.server!.chatRequests().map((request) => JSON.stringify(request.body));
    expect(chatBodies.some((body) => body.includes(CANARY))).toBe(true);
    const runKeys = await dumpKeys(rag.env.client.store.redis, `${rag.env.config.keyPrefix}:{s*}:run:*`, () => false);
    expect([...runKeys.values()].some((text) => text.includes(CANARY))).toBe(true);
  });

  it('0 canary hits in spans, logs, BullMQ keys, other run-store keys and the dashboard API', async () => {
    const { env } = rag;
    const redis = env.client.store.redis;
    const hits: string[] = [];
    const spans = exporter.getFinishedSpans();
    for (const span of spans)
      if (spanText(span).includes(CANARY)) hits.push(`span ${span.name}: ${spanText(span).slice(0, 300)}`);
    for (const line of logLines) if (line.includes(CANARY)) hits.push(`log ${line.slice(0, 300)}`);

    const queueKeys = await dumpKeys(redis, `${env.config.queuePrefix}:*`, () => false);
    const storeKeys = await dumpKeys(
      redis,
      `${env.config.keyPrefix}:*`,
      (key) => /:\{s\d+(-\d+)?\}:run:/.test(key) || key.includes(':{docs:'),
    );
    for (const [key, text] of [...queueKeys, ...storeKeys])
      if (text.includes(CANARY))
        hits.push(`redis ${key}: ${text.slice(text.indexOf(CANARY) - 120, text.indexOf(CANARY) + 60)}`);

    const admin = { authorization: `Bearer ${KEYS.acmeAdmin}` };
    let dashboardAnswers = 0;
    for (const queue of agentqQueueNames()) {
      for (const status of [
        'latest',
        'active',
        'waiting',
        'completed',
        'failed',
        'delayed',
        'paused',
        'prioritized',
        'waiting-children',
      ]) {
        const answer = await env.app.inject({
          method: 'GET',
          url: `/admin/queues/api/queues?activeQueue=${queue}&status=${status}&page=1&jobsPerPage=1000`,
          headers: admin,
        });
        expect(answer.statusCode, `${queue}/${status}: ${answer.body.slice(0, 400)}`).toBe(200);
        dashboardAnswers += 1;
        if (answer.body.includes(CANARY))
          hits.push(
            `dashboard ${queue}/${status}: ${answer.body.slice(answer.body.indexOf(CANARY) - 120, answer.body.indexOf(CANARY) + 60)}`,
          );
      }
    }
    recordFigure({ scenario: 'canary', name: 'spans_scanned', value: spans.length });
    recordFigure({ scenario: 'canary', name: 'log_lines_scanned', value: logLines.length });
    recordFigure({ scenario: 'canary', name: 'redis_keys_scanned', value: queueKeys.size + storeKeys.size });
    recordFigure({ scenario: 'canary', name: 'dashboard_answers_scanned', value: dashboardAnswers });
    recordFigure({ scenario: 'canary', name: 'canary_hits', value: hits.length, goal: '= 0' });
    expect(spans.length).toBeGreaterThan(0);
    expect(logLines.length).toBeGreaterThan(0);
    expect(queueKeys.size).toBeGreaterThan(0);
    expect(hits).toEqual([]);
  });
});
