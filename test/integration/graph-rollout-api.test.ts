import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rolloutBucket } from '../../shared/store/rollouts/graph-rollouts.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { versionEchoGraph } from '../helpers/version-echo-graph.js';
import { parsePrometheusText } from '../helpers/api-prometheus-parser.js';

/** The first run id with the prefix whose bucket is (or is not) below `percent`. */
function idWhere(prefix: string, percent: number, inRamp: boolean): string {
  for (let index = 0; ; index += 1)
    if (rolloutBucket(`${prefix}-${index}`) < percent === inRamp) return `${prefix}-${index}`;
}

/** The rollout through the HTTP API (admin role) and the CLI, on the same Redis as the runs they steer. */
describe('graph rollout over HTTP and the CLI', () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({
      builtInGraphs: false,
      graphs: [versionEchoGraph('echo', '1'), versionEchoGraph('echo', '2')],
    });
  });
  afterAll(async () => {
    await env?.close();
  });

  const admin = (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>) =>
    env.as(KEYS.acmeAdmin, { method, url, ...(payload === undefined ? {} : { payload }) });

  it('PUT sets current and ramp, POST /v1/runs follows it, promote and rollback answer the rollout after them', async () => {
    const set = await admin('PUT', '/v1/graphs/echo/rollout', { current: '1', ramp: '2', percent: 25 });
    expect(set.statusCode).toBe(200);
    expect(json(set)).toMatchObject({ graph: 'echo', current: '1', ramp: { version: '2', percent: 25 } });
    expect(json(await admin('GET', '/v1/graphs/echo/rollout'))).toMatchObject({ current: '1', ramp: { percent: 25 } });
    expect(json<{ rollouts: unknown[] }>(await admin('GET', '/v1/graphs/rollouts')).rollouts).toHaveLength(1);

    // The API's runs are named per tenant (acme's runId is not the stored id): read the version it stored.
    const runs = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        env.as(KEYS.acmeProducer, {
          method: 'POST',
          url: '/v1/runs',
          payload: { graph: 'echo', input: {}, runId: `api-${index}` },
        }),
      ),
    );
    for (const answer of runs) {
      const record = json<{ id: string; graphVersion: string }>(answer);
      expect(record.graphVersion).toBe(rolloutBucket(record.id) < 25 ? '2' : '1');
    }
    const explicit = json<{ graphVersion: string }>(
      await env.as(KEYS.acmeProducer, {
        method: 'POST',
        url: '/v1/runs',
        payload: { graph: 'echo', graphVersion: '2', input: {} },
      }),
    );
    expect(explicit.graphVersion).toBe('2');

    expect(json(await admin('POST', '/v1/graphs/echo/rollout/pause'))).toMatchObject({
      ramp: { version: '2', percent: 0 },
    });
    expect(json(await admin('POST', '/v1/graphs/echo/rollout/promote'))).toMatchObject({ current: '2', ramp: null });
    expect(json(await admin('POST', '/v1/graphs/echo/rollout/rollback', { current: '1' }))).toMatchObject({
      current: '1',
      ramp: null,
    });
    expect((await admin('DELETE', '/v1/graphs/echo/rollout')).statusCode).toBe(204);
    expect((await admin('DELETE', '/v1/graphs/echo/rollout')).statusCode).toBe(404);
  });

  it('refuses an unserved version (409 ROLLOUT_VERSION_UNSERVED), a bad percent (400), and a producer key (403)', async () => {
    const unserved = await admin('PUT', '/v1/graphs/echo/rollout', { current: '1', ramp: '9', percent: 10 });
    expect(unserved.statusCode).toBe(409);
    expect(json<{ error: { code: string; message: string } }>(unserved).error).toMatchObject({
      code: 'ROLLOUT_VERSION_UNSERVED',
      message: expect.stringMatching(/echo@9.*served versions of echo: 1, 2/),
    });
    expect((await admin('PUT', '/v1/graphs/echo/rollout', { ramp: '2', percent: 101 })).statusCode).toBe(400);
    expect((await admin('PUT', '/v1/graphs/echo/rollout', { ramp: '2', share: 10 })).statusCode).toBe(400);
    const producer = await env.as(KEYS.acmeProducer, { method: 'GET', url: '/v1/graphs/echo/rollout' });
    expect(producer.statusCode).toBe(403);
    expect(json(await admin('GET', '/v1/graphs/echo/rollout'))).toMatchObject({ current: null, ramp: null });
  });

  it('agentq graph rollout sets, ramps, pauses, promotes and rolls back; a run the client then creates follows', async () => {
    const cli = (...args: string[]) => runCli(['graph', 'rollout', 'echo', ...args], cliEnv(env.config));
    const ramped = await cli('--current', '1', '--ramp', '2', '--percent', '10');
    expect(ramped).toMatchObject({ code: 0, stdout: 'echo  current=1  ramp=2@10%\n' });
    const inRamp = idWhere('cli', 10, true);
    expect((await env.client.enqueue({ graph: 'echo', runId: inRamp, input: {} })).graphVersion).toBe('2');
    expect((await cli('--pause')).stdout).toBe('echo  current=1  ramp=2@0%\n');
    expect(JSON.parse((await cli('--promote', '--json')).stdout)).toMatchObject({ current: '2', ramp: null });
    expect((await cli('--rollback', '--current', '1')).stdout).toBe('echo  current=1  ramp=none\n');
    expect((await cli()).stdout).toBe('echo  current=1  ramp=none\n');

    const unserved = await cli('--ramp', '7', '--percent', '5');
    expect(unserved.code).toBe(1);
    expect(unserved.stderr).toMatch(/ROLLOUT_VERSION_UNSERVED: no live worker serves graph echo@7/);
    const usage = await cli('--promote', '--percent', '5');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--promote takes no other change/);
    expect((await cli('--percent', 'ten')).code).toBe(2);
    expect((await cli('--clear')).stdout).toBe('echo  rollout removed\n');
  });

  it('/metrics counts finished runs per graph and version they ran; a version no worker took a run in with is no label', async () => {
    const metrics = async () => {
      const families = parsePrometheusText((await admin('GET', '/metrics')).body);
      expect(families.get('agentq_graph_runs_active')?.type).toBe('gauge');
      return (labels: Record<string, string>) =>
        families
          .get('agentq_graph_runs_finished_total')
          ?.samples.find((entry) => Object.entries(labels).every(([label, value]) => entry.labels[label] === value))
          ?.value ?? 0;
    };
    const before = await metrics();
    await env.client.rollouts.set('echo', { current: '1', ramp: '2', percent: 50 });
    const ids = [idWhere('m', 50, true), idWhere('m-b', 50, true), idWhere('m', 50, false)];
    for (const id of ids) await env.client.enqueue({ graph: 'echo', runId: id, input: {} });
    const done = await Promise.all(ids.map((id) => env.client.wait(id, { timeoutMs: 30_000 })));
    expect(done.map((record) => record.output)).toEqual(['2', '2', '1']);
    // Named a version nobody serves: it fails unserved, never taken in.
    const unserved = await env.client.enqueue(
      { graph: 'echo', graphVersion: '5', runId: 'asks-for-5', input: {} },
      { queueUnserved: true },
    );
    expect((await env.client.wait(unserved.id, { timeoutMs: 30_000 })).status).toBe('failed');

    const after = await metrics();
    const delta = (labels: Record<string, string>) => after(labels) - before(labels);
    expect(delta({ graph: 'echo', graph_version: '2', status: 'completed' })).toBe(2);
    expect(delta({ graph: 'echo', graph_version: '1', status: 'completed' })).toBe(1);
    expect(after({ graph: 'echo', graph_version: '5', status: 'failed' })).toBe(0);
    await env.client.rollouts.clear('echo');
  });

  it("the inspector's Graphs page shows each graph's served versions and rollout (admin); the runs list shows name@version", async () => {
    await env.client.rollouts.set('echo', { current: '1', ramp: '2', percent: 5 });
    const page = await env.as(KEYS.acmeAdmin, { method: 'GET', url: '/graphs' });
    expect(page.statusCode).toBe(200);
    const row = /<tr class="graph-row" data-graph="echo">([\s\S]*?)<\/tr>/.exec(page.body)?.[1] ?? '';
    expect(row.replace(/<[^>]+>/g, '')).toMatch(/echo1, 2current 1 · ramping 2 at 5 %/);
    expect((await env.as(KEYS.acmeProducer, { method: 'GET', url: '/graphs' })).statusCode).toBe(404);
    const run = await env.client.enqueue({ graph: 'echo', tenant: 'acme', runId: idWhere('page', 5, true), input: {} });
    await env.client.wait(run.id, { timeoutMs: 30_000 });
    const list = await env.as(KEYS.acmeAdmin, { method: 'GET', url: '/runs?graph=echo' });
    expect(list.body).toContain('echo@2');
    await env.client.rollouts.clear('echo');
  });
});
