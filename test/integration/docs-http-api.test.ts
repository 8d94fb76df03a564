import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiInstance } from '../../producer/api/create-api.js';
import { createTestApi, json } from '../helpers/api-test-env.js';
import { readDoc } from '../helpers/doc-pages.js';

/**
 * Served paths the OpenAPI document leaves out on purpose: HTML for people, not an API to call — the
 * OpenAPI page itself, Bull Board (/admin) and the run inspector (/runs, /batches/:id, /graphs). Each is
 * described in docs/reference/http-api.md in prose.
 */
const NOT_IN_OPENAPI = [
  /^\/docs(\/|$)/,
  /^\/admin(\/|$)/,
  /^\/runs(\/|$)/,
  /^\/batches\//,
  /^\/graphs$/,
  /^\/assets\//,
];

/** `METHOD /path` of every route fastify serves, read from its route tree (HEAD, which fastify adds to GETs, left out). */
function registeredRoutes(app: ApiInstance): string[] {
  const routes: string[] = [];
  const paths: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+) \(([^)]+)\)$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    paths.length = depth;
    const path = `${paths[depth - 1] ?? ''}${match[2]!}`;
    paths[depth] = path;
    for (const method of match[3]!.split(', ')) if (method !== 'HEAD') routes.push(`${method} ${path}`);
  }
  return routes;
}

describe('the HTTP API reference', () => {
  let app: ApiInstance;
  let openapiRoutes: string[];
  beforeAll(async () => {
    // The route map is served without a key only with AGENTQ_PUBLIC_DOCS: as a public docs site would.
    app = await createTestApi({ AGENTQ_PUBLIC_DOCS: 'true' });
    const document = json<{ paths: Record<string, Record<string, unknown>> }>(
      await app.inject({ method: 'GET', url: '/docs/json' }),
    );
    openapiRoutes = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
  });
  afterAll(async () => {
    await app.close();
  });

  it('the OpenAPI document at /docs/json has every route the API serves (but the HTML pages)', () => {
    const served = registeredRoutes(app);
    expect(served).toContain('POST /v1/runs');
    expect(served).toContain('GET /v1/runs/:id/events');
    const api = served.filter((route) => !NOT_IN_OPENAPI.some((pattern) => pattern.test(route.split(' ')[1]!)));
    expect(api.filter((route) => !openapiRoutes.includes(route))).toEqual([]);
  });

  it('docs/reference/http-api.md lists every route of the OpenAPI document', () => {
    const page = readDoc('docs/reference/http-api.md');
    expect(openapiRoutes.length).toBeGreaterThan(20);
    expect(openapiRoutes.filter((route) => !page.includes(`\`${route}\``))).toEqual([]);
  });
});
