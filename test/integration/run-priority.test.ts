import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { AgentqError } from '../../shared/errors.js';
import { BATCH_DEFAULT_PRIORITY, MAX_RUN_PRIORITY } from '../../shared/job-schema.js';
import { createLogger } from '../../shared/logger.js';
import { INTAKE_QUEUE } from '../../shared/queues.js';
import { startJobOptions } from '../../shared/run-enqueuer.js';
import { API_KEYS_ENV, bearer, json, KEYS } from '../helpers/api-test-env.js';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * The producer side of run priorities: validated everywhere a run is asked for, stored on the run meta as
 * field `priority` (a BullMQ priority number; the engine adds the run's step jobs with it), batch runs
 * behind interactive ones by default.
 */
describe('run priority', () => {
  let env: TestEnv;
  let app: ApiInstance;
  const metaPriority = (runId: string) => env.client.store.redis.hget(env.client.store.keys.run(runId).meta, 'priority');

  beforeAll(async () => {
    env = await startTestEnv({ graphs: [echoRagGraph()], env: { AGENTQ_API_KEYS: API_KEYS_ENV } });
    app = await createApi({ config: env.config, logger: createLogger(env.config.logLevel) });
  });
  afterAll(async () => {
    await app.close();
    await env.close();
  });

  it('the client stores a run\'s priority on its meta; a run without one has none', async () => {
    const urgent = await env.client.enqueue({ graph: 'echo-rag', input: { query: 'now' }, priority: 1 });
    const plain = await env.client.enqueue({ graph: 'echo-rag', input: { query: 'whenever' } });
    expect(await metaPriority(urgent.id)).toBe('1');
    expect(await metaPriority(plain.id)).toBeNull();
    expect((await env.client.store.get(urgent.id))?.priority).toBe(1);
    expect(await env.client.wait(urgent.id)).toMatchObject({ status: 'completed' });
    // The start job added outside the creation script carries it too.
    expect(startJobOptions('r1', 7)).toMatchObject({ priority: 7, jobId: 'r1.s0.t0' });
    expect(startJobOptions('r1')).not.toHaveProperty('priority');
  });

  it('a priority out of range is INVALID_INPUT naming the field, from the client, the API and the CLI', async () => {
    for (const priority of [0, -1, 2.5, MAX_RUN_PRIORITY + 1, 'high']) {
      const error = await env.client.enqueue({ graph: 'echo-rag', input: { query: 'x' }, priority: priority as number }).then(() => undefined, (thrown: unknown) => thrown);
      expect(AgentqError.isInstance(error) && error.code).toBe('INVALID_INPUT');
      expect((error as Error).message).toContain(`priority must be a whole number from 1 (most urgent) to ${MAX_RUN_PRIORITY}`);

      const response = await app.inject({ method: 'POST', url: '/v1/runs', headers: bearer(KEYS.acmeProducer), payload: { graph: 'echo-rag', input: { query: 'x' }, priority } });
      expect(response.statusCode).toBe(400);
      expect(JSON.stringify(json(response))).toContain('priority');
    }
    const accepted = await app.inject({ method: 'POST', url: '/v1/runs', headers: bearer(KEYS.acmeProducer), payload: { graph: 'echo-rag', input: { query: 'x' }, priority: 42 } });
    expect(accepted.statusCode).toBe(202);
    expect(await metaPriority(json<{ id: string }>(accepted).id)).toBe('42');

    const refused = await runCli(['run', 'echo-rag', '--input', '{"query":"x"}', '--priority', '0'], cliEnv(env.config));
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('priority must be a whole number');
    const ran = await runCli(['run', 'echo-rag', '--input', '{"query":"x"}', '--priority', '9', '--json'], cliEnv(env.config));
    expect(ran.code).toBe(0);
    expect(await metaPriority((JSON.parse(ran.stdout) as { id: string }).id)).toBe('9');
  });

  it('a raw job (job schema v1) may carry a priority; the run meta keeps it', async () => {
    await env.queue(INTAKE_QUEUE).add('run', { v: 1, graph: 'echo-rag', input: { query: 'raw' }, runId: 'raw-prio-1', priority: 3 });
    await eventually(async () => (await env.client.store.get('raw-prio-1'))?.status === 'completed', 30_000);
    expect(await metaPriority('raw-prio-1')).toBe('3');
  });

  it('batch runs default to a priority behind interactive runs', async () => {
    const { batch } = await env.client.batches.submit({ collection: 'docs', questions: [{ question: 'a' }, { question: 'b' }], options: { concurrency: 2, graph: 'echo-rag' } }, { tenant: 'acme' });
    await eventually(async () => (await env.client.batches.get(batch.id))?.status === 'completed', 30_000);
    const runIds = (await env.client.batches.results(batch.id))!.map((result) => result.runId);
    expect(runIds).toHaveLength(2);
    for (const runId of runIds) expect(await metaPriority(runId!)).toBe(String(BATCH_DEFAULT_PRIORITY));
  });
});
