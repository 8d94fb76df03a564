import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { ApiInstance } from '../../producer/api/create-api.js';
import { bearer, createTestApi, isErrorShape, json, KEYS } from '../helpers/api-test-env.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { atScale, suiteSeed } from '../helpers/suite-scale.js';

/**
 * Fuzzing every route's path, body, query and headers through app.inject against a real Redis: the API
 * answers 4xx (in the error shape) or 2xx, never 5xx. No worker runs, so runs stay queued; every run
 * id the fuzzer can create starts with `fz-post-` and no other route is ever asked about one (an event
 * stream of a queued run would wait for it forever).
 */
const SEED = suiteSeed();
const CASES = atScale(1000, 10_000);
/** 5,000 levels of arrays: JSON a server must refuse with a 4xx, not crash on when it stores it. */
const DEEP = `${'['.repeat(5000)}1${']'.repeat(5000)}`;

const printable = (maxLength: number) => fc.string({ unit: 'grapheme-ascii', maxLength });
const idLike = fc.stringMatching(/^[A-Za-z0-9_.-]{1,24}$/);
const json3 = fc.jsonValue({ maxDepth: 3 });
/** JSON values without strings at the top: a bare string could name an existing run. */
const notAString = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(json3, { maxLength: 3 }),
  fc.dictionary(printable(8), json3, { maxKeys: 3 }),
);

const authorization = fc.oneof(
  { weight: 12, arbitrary: fc.constant(`Bearer ${KEYS.acmeProducer}`) },
  { weight: 2, arbitrary: fc.constant(`Bearer ${KEYS.acmeAdmin}`) },
  { weight: 2, arbitrary: fc.constant(`Bearer ${KEYS.globexProducer}`) },
  { weight: 1, arbitrary: fc.constant(`Basic ${Buffer.from(`x:${KEYS.acmeAdmin}`).toString('base64')}`) },
  { weight: 1, arbitrary: printable(60).map((text) => `Bearer ${text}`) },
  { weight: 1, arbitrary: printable(60).map((text) => `Basic ${Buffer.from(text).toString('base64')}`) },
  { weight: 1, arbitrary: printable(60) },
);
const contentType = fc.oneof(
  { weight: 24, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      'application/json; charset=latin1',
    ),
  },
  { weight: 1, arbitrary: printable(40) },
);
const eventId = fc.oneof(
  fc.tuple(fc.bigInt(0n, 10n ** 16n), fc.bigInt(0n, 10n ** 16n)).map(([time, sequence]) => `${time}-${sequence}`),
  fc.constantFrom('0-0', '0', '-1', '18446744073709551615-0', '$', '>'),
  printable(30),
);
const headers = fc
  .record(
    {
      authorization: fc.option(authorization, { freq: 12 }),
      'content-type': fc.option(contentType, { freq: 8 }),
      'idempotency-key': fc.option(fc.oneof(idLike, printable(140)), { freq: 3 }),
      'last-event-id': fc.option(eventId, { freq: 3 }),
      accept: fc.option(fc.constantFrom('*/*', 'text/html', 'application/json', 'text/event-stream'), { freq: 3 }),
      cookie: fc.option(
        fc.oneof(
          printable(80),
          printable(43).map((token) => `agentq_session=${token}`),
        ),
        { freq: 3 },
      ),
      'x-fuzz': fc.option(printable(40), { freq: 3 }),
    },
    { requiredKeys: ['authorization', 'content-type'] },
  )
  .map((record) =>
    Object.fromEntries(
      Object.entries(record).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    ),
  );

const queryValue = fc.oneof(
  printable(40),
  fc.constantFrom('true', 'false', '1', '0', '-1', '201', '1e309', 'NaN', 'completed', 'queued', 'waiting', 'chain'),
  fc.integer().map(String),
  // Cursors: forged ones that decode to odd scores.
  fc
    .tuple(
      fc.oneof(fc.double().map(String), fc.constantFrom(' 5', 'inf', '+inf', 'Infinity', '1e400', '0x10', '')),
      fc.oneof(idLike, printable(10)),
    )
    .map(([score, id]) => Buffer.from(`${score}|${id}`).toString('base64url')),
);
const queryKey = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('status', 'graph', 'limit', 'cursor', 'purge', 'next') },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'key') },
  { weight: 1, arbitrary: printable(10) },
);
const query = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .array(fc.tuple(queryKey, queryValue), { maxLength: 3 })
      .map((pairs) => new URLSearchParams(pairs).toString()),
  },
  { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '&&&', '=', 'limit=%FF', 'a[b]=1', 'limit=5&limit=6') },
  { weight: 1, arbitrary: printable(30).map((raw) => raw.replace(/[#\s]/g, '')) },
);

const runBody = fc.oneof(
  { weight: 1, arbitrary: json3 },
  {
    // Close to valid, so the fuzzer reaches the enqueue itself.
    weight: 3,
    arbitrary: fc.record(
      {
        graph: fc.oneof(
          fc.constantFrom('chain', 'approval', 'nope'),
          printable(128).filter((graph) => graph.length > 0),
        ),
        input: json3,
        runId: idLike.map((id) => `fz-post-${id}`),
        idempotencyKey: idLike,
        options: fc.record(
          { maxSteps: fc.integer({ min: 1, max: 100_000 }), deadlineMs: fc.integer({ min: 1, max: 10 ** 9 }) },
          { requiredKeys: [] },
        ),
        webhookUrl: fc.webUrl(),
      },
      { requiredKeys: ['graph', 'input'] },
    ),
  },
  {
    weight: 4,
    arbitrary: fc.record(
      {
        graph: fc.oneof(fc.constantFrom('chain', 'approval', 'nope'), printable(140), notAString),
        input: json3,
        graphVersion: fc.oneof(printable(70), notAString),
        runId: fc.oneof(
          idLike.map((id) => `fz-post-${id}`),
          printable(140).map((text) => `fz-post-${text}`),
          notAString,
        ),
        idempotencyKey: fc.oneof(idLike, printable(140), notAString),
        tenant: fc.oneof(idLike, notAString),
        options: fc.oneof(
          notAString,
          fc.record(
            {
              maxSteps: fc.oneof(fc.integer(), fc.double(), json3),
              deadlineMs: fc.oneof(fc.integer(), fc.double(), json3),
              tokenBudget: fc.oneof(fc.integer(), json3),
            },
            { requiredKeys: [] },
          ),
        ),
        webhookUrl: fc.oneof(fc.webUrl(), printable(100), notAString),
        extra: json3,
      },
      { requiredKeys: [] },
    ),
  },
);

/** The body as sent: JSON text mostly, raw text sometimes, now and then nothing or something too large. */
function payloadOf(body: fc.Arbitrary<unknown>): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 8, arbitrary: body.map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: printable(60) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        '',
        '{',
        'null',
        '[]',
        '"x"',
        `{"graph":"chain","input":"${'x'.repeat(20_000)}"}`,
        `{"graph":"chain","input":${DEEP}}`,
        `{"query":${DEEP}}`,
        DEEP,
      ),
    },
  );
}

interface RouteCase {
  method: InjectOptions['method'];
  path: string;
  query: string;
  headers: Record<string, string>;
  payload: string | undefined;
}

describe('fuzzing every route (no 5xx)', () => {
  let app: ApiInstance;
  const ownIds: string[] = [];
  let foreignId = '';
  const session = { cookie: '', csrf: '' };

  beforeAll(async () => {
    console.log(`api fuzz seed=${SEED}, ${CASES} cases per route (AGENTQ_SEED=${SEED} reproduces them)`);
    app = await createTestApi({
      AGENTQ_RATE_LIMIT_PER_MINUTE: '0',
      // The fuzzer's wrong keys would soon lock its one address out (429 for every key): limits are tested apart.
      AGENTQ_AUTH_FAILURES_PER_MINUTE: '0',
      AGENTQ_TENANT_MAX_INFLIGHT: '0',
      AGENTQ_BODY_LIMIT_BYTES: '16384',
    });
    // Finished runs the fuzzer may name (cancelled at once: no worker takes them).
    const finishedRun = async (key: string, id: string) => {
      await app.inject({
        method: 'POST',
        url: '/v1/runs',
        headers: bearer(key),
        payload: { graph: 'chain', input: { steps: 1 }, runId: id },
      });
      const cancelled = await app.inject({ method: 'DELETE', url: `/v1/runs/${id}`, headers: bearer(key) });
      if (json(cancelled).status !== 'cancelled')
        throw new Error(`setup: run ${id} is not cancelled: ${cancelled.body}`);
    };
    for (const id of ['fz-own-1', 'fz-own-2', 'fz-own-3']) {
      await finishedRun(KEYS.acmeProducer, id);
      ownIds.push(id);
    }
    foreignId = 'fz-foreign-1';
    await finishedRun(KEYS.globexProducer, foreignId);
    // A signed-in browser's cookie and CSRF token, for the pages' forms.
    const signedIn = await app.inject({
      method: 'POST',
      url: '/runs/login',
      payload: `key=${KEYS.acmeProducer}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    session.cookie = String(signedIn.headers['set-cookie']).split(';')[0]!;
    const list = await app.inject({ method: 'GET', url: '/runs', headers: { cookie: session.cookie } });
    session.csrf = /name="_csrf" value="([^"]+)"/.exec(list.body)![1]!;
  });
  const totals = { routes: 0, cases: 0, serverErrors: 0 };
  afterAll(async () => {
    await app?.close();
    recordFigure({ scenario: 'api fuzz', name: 'routes_fuzzed', value: totals.routes });
    recordFigure({ scenario: 'api fuzz', name: 'cases_run', value: totals.cases, goal: `${CASES} per route` });
    recordFigure({ scenario: 'api fuzz', name: 'answers_5xx', value: totals.serverErrors, goal: '= 0' });
    recordFigure({ scenario: 'api fuzz', name: 'seed', value: SEED });
  });

  const idParam = () =>
    fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...ownIds, foreignId) },
      { weight: 2, arbitrary: idLike.map((id) => `fz-miss-${id}`) },
      {
        weight: 2,
        arbitrary: fc.string({ unit: 'binary', maxLength: 300 }).map((text) => encodeURIComponent(`fz-x${text}`)),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom('%', '%zz', '%00', '..', '.', 'fz-own-1%2F..', 'a'.repeat(129), 'b'.repeat(300)),
      },
    );

  /** One inject per case; fails on any 5xx (other than `allowed`) and on a 4xx outside the error shape. */
  async function fuzz(name: string, cases: fc.Arbitrary<RouteCase>, allowed: number[] = []): Promise<void> {
    let count = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(cases, async (routeCase) => {
        count += 1;
        const url = `${routeCase.path}${routeCase.query ? `?${routeCase.query}` : ''}`;
        const response: LightMyRequestResponse = await app.inject({
          method: routeCase.method,
          url,
          headers: routeCase.headers,
          ...(routeCase.payload === undefined ? {} : { payload: routeCase.payload }),
        });
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        totals.cases += 1;
        if (response.statusCode >= 500 && !allowed.includes(response.statusCode)) totals.serverErrors += 1;
        const label = `${routeCase.method} ${url} ${JSON.stringify(routeCase.headers)} ${String(routeCase.payload).slice(0, 200)}`;
        if (response.statusCode >= 500 && !allowed.includes(response.statusCode)) {
          throw new Error(`${label}\n→ ${response.statusCode} ${response.body.slice(0, 500)}`);
        }
        // Bull Board's own API keeps its own error format (its UI reads it); everything else has ours.
        const bullBoardApi =
          routeCase.path.startsWith('/admin/queues/api/') &&
          response.statusCode !== 401 &&
          response.statusCode !== 403 &&
          response.statusCode !== 503;
        if (
          response.statusCode >= 400 &&
          !bullBoardApi &&
          !String(response.headers['content-type']).startsWith('text/html')
        ) {
          let body: unknown;
          try {
            body = JSON.parse(response.body);
          } catch {
            throw new Error(
              `${label}\n→ ${response.statusCode} with a body that is not JSON: ${response.body.slice(0, 300)}`,
            );
          }
          if (!isErrorShape(body))
            throw new Error(
              `${label}\n→ ${response.statusCode} not in the error shape: ${response.body.slice(0, 300)}`,
            );
        }
      }),
      { seed: SEED, numRuns: CASES },
    );
    totals.routes += 1;
    if (count < CASES) throw new Error(`${name}: only ${count} cases ran`);
    console.log(
      `${name}: ${[...statuses]
        .sort(([a], [b]) => a - b)
        .map(([status, times]) => `${status}×${times}`)
        .join(' ')}`,
    );
  }

  const routeCase = (
    method: RouteCase['method'],
    path: fc.Arbitrary<string>,
    body: fc.Arbitrary<unknown> = json3,
  ): fc.Arbitrary<RouteCase> =>
    fc.record({ method: fc.constant(method), path, query, headers, payload: payloadOf(body) });

  it('POST /v1/runs', () => fuzz('POST /v1/runs', routeCase('POST', fc.constant('/v1/runs'), runBody)));
  it('GET /v1/runs', () => fuzz('GET /v1/runs', routeCase('GET', fc.constant('/v1/runs'))));
  it('GET /v1/runs/:id', () =>
    fuzz(
      'GET /v1/runs/:id',
      routeCase(
        'GET',
        idParam().map((id) => `/v1/runs/${id}`),
      ),
    ));
  it('GET /v1/runs/:id/messages', () =>
    fuzz(
      'messages',
      routeCase(
        'GET',
        idParam().map((id) => `/v1/runs/${id}/messages`),
      ),
    ));
  it('GET /v1/runs/:id/steps', () =>
    fuzz(
      'steps',
      routeCase(
        'GET',
        idParam().map((id) => `/v1/runs/${id}/steps`),
      ),
    ));
  it('GET /v1/runs/:id/events', () =>
    fuzz(
      'events',
      routeCase(
        'GET',
        idParam().map((id) => `/v1/runs/${id}/events`),
      ),
    ));
  it('DELETE /v1/runs/:id', () =>
    fuzz(
      'DELETE',
      routeCase(
        'DELETE',
        idParam().map((id) => `/v1/runs/${id}`),
      ),
    ));
  it('POST /v1/runs/:id/retry', () =>
    fuzz(
      'retry',
      routeCase(
        'POST',
        idParam().map((id) => `/v1/runs/${id}/retry`),
      ),
    ));
  it('POST /v1/runs/:id/resume', () =>
    fuzz(
      'resume',
      routeCase(
        'POST',
        idParam().map((id) => `/v1/runs/${id}/resume`),
        fc.oneof(json3, fc.record({ value: json3 }), fc.record({ value: json3, extra: json3 })),
      ),
    ));
  it('GET /healthz and /readyz', () => fuzz('probes', routeCase('GET', fc.constantFrom('/healthz', '/readyz'))));
  it('GET /metrics', () => fuzz('metrics', routeCase('GET', fc.constant('/metrics'))));
  it('the capability routes (chat, documents, batches, search) answer no 5xx', () =>
    fuzz(
      'capabilities',
      fc
        .tuple(
          fc.constantFrom<[RouteCase['method'], string]>(
            ['POST', '/v1/agent/chat'],
            ['POST', '/v1/documents'],
            ['GET', '/v1/documents'],
            ['GET', '/v1/documents/doc_1'],
            ['GET', '/v1/documents/batches/bat_1'],
            ['DELETE', '/v1/documents/doc_1'],
            ['DELETE', '/v1/documents'],
            ['POST', '/v1/batches'],
            ['GET', '/v1/batches/bat_1'],
            ['DELETE', '/v1/batches/bat_1'],
            ['POST', '/v1/search'],
            ['GET', '/v1/search'],
          ),
          query,
          headers,
          payloadOf(json3),
        )
        .map(([[method, path], queryText, headerValues, payload]) => ({
          method,
          path,
          query: queryText,
          headers: headerValues,
          payload,
        })),
    ));
  it('the dashboard sign-in and its API', () =>
    fuzz(
      'dashboard',
      fc.oneof(
        fc.record({
          method: fc.constant<RouteCase['method']>('POST'),
          path: fc.constant('/admin/login'),
          query,
          headers: headers.map((values) => ({ ...values, 'content-type': 'application/x-www-form-urlencoded' })),
          payload: fc
            .array(
              fc.tuple(
                fc.constantFrom('key', 'next', 'x'),
                fc.oneof(
                  printable(60),
                  fc.constantFrom(KEYS.acmeAdmin, KEYS.acmeProducer, '//evil.example', '/admin/queues/../x'),
                ),
              ),
            )
            .map((pairs) => new URLSearchParams(pairs).toString()),
        }),
        routeCase(
          'GET',
          fc.constantFrom(
            '/admin/login',
            '/admin/queues/api/queues',
            '/admin/queues/api/redis/stats',
            '/admin/logout',
            '/admin',
            '/docs/json',
          ),
        ),
      ),
    ));
  it('the inspector pages and their forms', () => {
    const pageHeaders = fc
      .tuple(
        headers,
        fc.record(
          {
            cookie: fc.oneof(fc.constant(session.cookie), printable(60)),
            origin: fc.oneof(fc.constantFrom('http://localhost:80', 'http://localhost:9999', 'null'), printable(40)),
            'sec-fetch-site': fc.constantFrom('same-origin', 'same-site', 'cross-site', 'none'),
          },
          { requiredKeys: [] },
        ),
      )
      .map(([base, page]) => ({ ...base, ...page, 'content-type': 'application/x-www-form-urlencoded' }));
    const formBody = fc
      .array(
        fc.tuple(
          fc.constantFrom('_csrf', 'value', 'key', 'next', 'x'),
          fc.oneof(printable(60), fc.constantFrom(session.csrf, KEYS.acmeProducer, '/runs', '//evil.example')),
        ),
      )
      .map((pairs) => new URLSearchParams(pairs).toString());
    return fuzz(
      'pages',
      fc.oneof(
        fc.record({
          method: fc.constant<RouteCase['method']>('POST'),
          path: fc
            .tuple(idParam(), fc.constantFrom('cancel', 'retry', 'resume'))
            .map(([id, action]) => `/runs/${id}/${action}`),
          query,
          headers: pageHeaders,
          payload: formBody,
        }),
        fc.record({
          method: fc.constant<RouteCase['method']>('POST'),
          path: fc.constantFrom('/runs/login', '/runs/logout', '/admin/logout'),
          query,
          headers: pageHeaders,
          payload: formBody,
        }),
        routeCase(
          'GET',
          fc.oneof(
            idParam().map((id) => `/runs/${id}`),
            fc.constantFrom('/runs', '/runs/login', '/runs/logout', '/docs', '/docs/json', '/assets/run-live.js'),
          ),
        ),
      ),
    );
  });
  it('unknown routes', () =>
    fuzz(
      'unknown',
      fc.record({
        method: fc.constantFrom<RouteCase['method']>('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
        path: printable(60).map((path) => `/${encodeURI(path).replace(/[?#]/g, '')}`),
        query,
        headers,
        payload: payloadOf(json3),
      }),
    ));
});
