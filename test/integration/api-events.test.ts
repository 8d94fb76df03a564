import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { eventually } from '../helpers/test-env.js';
import { waiterGraph } from '../helpers/waiter-graph.js';

/** Events sent from outside — over HTTP and with the CLI — wake a step parked in `context.waitFor`. */
describe('sending events: POST /v1/events and agentq event send', () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [waiterGraph()] });
  });
  afterAll(async () => env.close());

  const parked = (runId: string) =>
    eventually(async () =>
      (await env.client.store.eventLog.events(runId)).some((event) => event.type === 'step-parked'),
    );

  it('an event sent over HTTP to a run of the tenant wakes its wait with the payload; another tenant gets 404', async () => {
    const run = json<{ id: string }>(
      await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/runs',
        payload: { graph: 'waiter', input: { name: 'approved' } },
      }),
    );
    const stored = await env.client.store.reads.get(run.id);
    await parked(stored!.id);
    const foreign = await env.as(KEYS.globexProducer, {
      method: 'POST',
      url: '/v1/events',
      payload: { runId: run.id, name: 'approved', data: { by: 'mallory' } },
    });
    expect(foreign.statusCode).toBe(404);
    const sent = await env.app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: bearer(KEYS.acmeProducer),
      payload: { runId: run.id, name: 'approved', data: { by: 'ann' } },
    });
    expect(sent.statusCode).toBe(202);
    expect(json(sent)).toMatchObject({ reached: 1, stored: false });
    const done = await env.client.wait(stored!.id);
    expect(done.output).toEqual({ data: { by: 'ann' }, key: null });
  });

  it('a body with both runId and key, or neither, is a 400', async () => {
    for (const payload of [{ name: 'x' }, { name: 'x', runId: 'a', key: 'b' }]) {
      const answer = await env.as(KEYS.acmeProducer, { method: 'POST', url: '/v1/events', payload });
      expect(answer.statusCode).toBe(400);
    }
  });

  it('agentq event send --key wakes the runs waiting on the key', async () => {
    const key = `cli-${Date.now()}`;
    const queued = await env.client.enqueue({ graph: 'waiter', input: { name: 'shipped', key } });
    await parked(queued.id);
    const result = await runCli(
      ['event', 'send', '--key', key, '--name', 'shipped', '--data', '{"parcel":3}', '--json'],
      cliEnv(env.config, { AGENTQ_TENANT: queued.tenant }),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ reached: 1, stored: true });
    expect((await env.client.wait(queued.id)).output).toEqual({ data: { parcel: 3 }, key });
    const usage = await runCli(['event', 'send', '--name', 'shipped'], cliEnv(env.config));
    expect(usage.code).toBe(2);
  });
});
