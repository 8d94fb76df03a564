import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_INPUT_DEPTH } from '../../shared/contracts/job-schema.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { isErrorShape, json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { eventually } from '../helpers/test-env.js';

/**
 * Attack: a JSON body field nested 5,000 levels deep — a run's input was capped at 100
 * levels, a resume value was not, and storing it overflowed the stack in JSON.stringify (500). Expected
 * answer: 400 INVALID_INPUT naming the field and the limit, on every route that takes a JSON body, before
 * anything is stored (the waiting run still waits); a value 100 levels deep is still accepted.
 */
const nested = (levels: number): unknown => {
  let value: unknown = 'leaf';
  for (let level = 0; level < levels; level += 1) value = level % 2 === 0 ? [value] : { deeper: value };
  return value;
};
const DEEP_TEXT = `${'['.repeat(5000)}1${']'.repeat(5000)}`;

const askGraph = defineGraph({
  name: 'ask',
  state: { answer: channel.replace<unknown>(null) },
  initialState: () => ({}),
})
  .node('ask', (_state, context) => ({ answer: context.interrupt<unknown>({ question: 'approve?' }) }))
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

describe('JSON bodies nested beyond the limit (issue 35 item 9)', () => {
  let env: ApiTestEnv;
  let waiting = '';

  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [askGraph] });
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'ask', input: {} },
    });
    waiting = json<{ id: string }>(created).id;
    await eventually(async () => (await env.client.get(waiting))?.status === 'waiting', 15_000, 'the run to wait');
  });
  afterAll(async () => env?.close());

  it('a resume value 5,000 levels deep answers 400 naming `value`, and the run still waits', async () => {
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: `/v1/runs/${waiting}/resume`,
      headers: { 'content-type': 'application/json' },
      payload: `{"value":${DEEP_TEXT}}`,
    });
    expect(response.statusCode).toBe(400);
    expect(json(response)).toMatchObject({
      error: {
        code: 'INVALID_INPUT',
        message: expect.stringMatching(/^body\.value nests more than 100 arrays\/objects deep/),
      },
    });
    expect((await env.client.get(waiting))?.status).toBe('waiting');
  });

  it('every route that takes a JSON body refuses a field nested too deep with 400, never 5xx', async () => {
    const document = json<{ paths: Record<string, Record<string, { requestBody?: { content?: object } }>> }>(
      await env.as(KEYS.acmeAdmin, { method: 'GET', url: '/docs/json' }),
    );
    const routes = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => Object.hasOwn(operation.requestBody?.content ?? {}, 'application/json'))
        .map(([method]) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, waiting) })),
    );
    // The routes of runs, batches, schedules, chat, search and budgets at least.
    expect(routes.length).toBeGreaterThanOrEqual(8);
    const answers: string[] = [];
    for (const { method, path } of routes) {
      const response = await env.as(KEYS.acmeAdmin, {
        method: method as 'POST',
        url: path,
        headers: { 'content-type': 'application/json' },
        payload: `{"input":${DEEP_TEXT}}`,
      });
      answers.push(`${method} ${path} → ${response.statusCode}`);
      expect(isErrorShape(json(response)), `${method} ${path}`).toBe(true);
      expect(json(response), `${method} ${path}`).toMatchObject({
        error: { code: 'INVALID_INPUT', message: expect.stringMatching(/^body\.input nests more than 100/) },
      });
    }
    expect(answers.filter((answer) => !answer.endsWith('→ 400'))).toEqual([]);
  });

  it(`an honest value ${MAX_INPUT_DEPTH} levels deep is still accepted and reaches the run`, async () => {
    const response = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: `/v1/runs/${waiting}/resume`,
      payload: { value: nested(MAX_INPUT_DEPTH) },
    });
    expect(response.statusCode).toBe(202);
    const finished = await eventually(async () => {
      const record = await env.client.get(waiting);
      return record?.status === 'completed' && record;
    });
    expect(JSON.stringify(finished.output)).toContain('leaf');
  });

  it('the library refuses the same value with INVALID_INPUT before it stores anything', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'ask', input: {} },
    });
    const runId = json<{ id: string }>(created).id;
    await eventually(async () => (await env.client.get(runId))?.status === 'waiting');
    await expect(env.client.resume(runId, nested(5000))).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect((await env.client.get(runId))?.status).toBe('waiting');
  });
});
