import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { RunReader } from '../../producer/client/run-reader.js';
import { openRunRecordSource, RunRecordReader } from '../../producer/client/run-record-reader.js';
import { AgentqError } from '../../shared/contracts/errors.js';
import { readRedisConfig } from '../../shared/config/redis-config.js';
import { eventually, startTestEnv, testConfig, type TestEnv } from '../helpers/test-env.js';

/**
 * `agentq status` reads a run's record over a bare RESP connection (CLI cold start). What it
 * reads must be what RunReader (ioredis) reads, for runs the real store and worker wrote.
 */
describe('RunRecordReader', () => {
  let env: TestEnv;
  let reader: RunReader;
  beforeAll(async () => {
    // Several shards: the run's keys carry its shard's hash tag, which the reader must build the same way.
    env = await startTestEnv({ env: { AGENTQ_SHARDS: '4' } });
    reader = new RunReader({ config: env.config });
  });
  afterAll(async () => {
    await reader.close();
    await env.close();
  });

  it('reads the same records as RunReader: completed, cancelled with its partial state, queued, missing', async () => {
    const completed = await env.client.enqueue({ graph: 'chain', input: { steps: 2 } });
    await env.client.wait(completed.id, { timeoutMs: 15_000 });

    const cancelled = await env.client.enqueue({ graph: 'chain', input: { steps: 50, sleepMs: 200 } });
    await eventually(
      async () => ((await env.client.get(cancelled.id))?.stepCount ?? 0) >= 1,
      15_000,
      'a committed step',
    );
    await env.client.cancel(cancelled.id);
    await env.client.wait(cancelled.id, { timeoutMs: 15_000 });

    // The workers serve no such graph, and the test config does not wait for one: it fails at once.
    const failed = await env.client.enqueue({ graph: 'graph-nobody-serves', input: {} }, { queueUnserved: true });
    await env.client.wait(failed.id, { timeoutMs: 15_000 });

    const records = new RunRecordReader(env.config);
    try {
      for (const id of [completed.id, cancelled.id, failed.id, 'run_never_was']) {
        expect(await records.get(id), id).toEqual(await reader.get(id));
      }
      expect((await records.get(completed.id))?.status).toBe('completed');
      const partial = (await records.get(cancelled.id))?.output as { partial?: Record<string, unknown> } | null;
      expect(partial?.partial, 'a cancelled run carries its last committed state').toMatchObject({ steps: 50 });
      expect((await records.get(failed.id))?.error?.code).toBe('UNKNOWN_GRAPH');
      expect(await records.get('run_never_was')).toBeNull();
    } finally {
      await records.close();
    }
  });

  it('reads a queued run that no worker has taken', async () => {
    // A config of its own, with no worker: the run stays queued.
    const config = testConfig({ AGENTQ_SHARDS: '2' });
    const client = new AgentClient({ config });
    const records = new RunRecordReader(config);
    try {
      const queued = await client.enqueue({ graph: 'chain', input: { steps: 1 } }, { queueUnserved: true });
      const record = await records.get(queued.id);
      expect(record?.status).toBe('queued');
      expect(record).toEqual(await client.get(queued.id));
    } finally {
      await records.close();
      await client.close();
    }
  });

  it('reads what the CLI reads from the environment: one Redis at a redis:// URL, else it is not used', () => {
    const url = env.config.redisUrl!;
    expect(RunRecordReader.canRead(readRedisConfig({ REDIS_URL: url }))).toBe(true);
    expect(RunRecordReader.canRead(readRedisConfig({}))).toBe(true);
    // A Cluster, TLS and URL options stay with ioredis (RunReader).
    expect(
      RunRecordReader.canRead(readRedisConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000', AGENTQ_QUEUE_PREFIX: '{q}' })),
    ).toBe(false);
    expect(RunRecordReader.canRead(readRedisConfig({ REDIS_URL: url.replace('redis://', 'rediss://') }))).toBe(false);
    expect(RunRecordReader.canRead(readRedisConfig({ REDIS_URL: `${url}?family=6` }))).toBe(false);
    expect(() => new RunRecordReader(readRedisConfig({ REDIS_URL: url.replace('redis://', 'rediss://') }))).toThrow(
      /check RunRecordReader.canRead/,
    );
  });

  it('leaves to RunReader (ioredis) what it cannot read, which reads the same record', async () => {
    const completed = await env.client.enqueue({ graph: 'chain', input: { steps: 1 } });
    await env.client.wait(completed.id, { timeoutMs: 15_000 });
    const plain = await openRunRecordSource(env.config);
    // A URL option (ioredis's `family`) is not this reader's to read.
    const withOption = await openRunRecordSource({ ...env.config, redisUrl: `${env.config.redisUrl!}?family=4` });
    try {
      expect(plain).toBeInstanceOf(RunRecordReader);
      expect(withOption).toBeInstanceOf(RunReader);
      expect(await withOption.get(completed.id)).toEqual(await plain.get(completed.id));
      expect((await plain.get(completed.id))?.status).toBe('completed');
    } finally {
      await plain.close();
      await withOption.close();
    }
  });

  it('refuses as RunReader does when Redis does not answer: UNAVAILABLE, naming the target', async () => {
    // Nothing listens on port 1; a short command timeout keeps the wait (timeout + 1 s) short.
    const config = readRedisConfig({ REDIS_URL: 'redis://127.0.0.1:1', AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '50' });
    const records = new RunRecordReader(config);
    const ioredis = new RunReader({ config });
    try {
      const [light, full] = await Promise.all([
        records.get('run_x').catch((error: unknown) => error),
        ioredis.get('run_x').catch((error: unknown) => error),
      ]);
      expect(light).toBeInstanceOf(AgentqError);
      expect(full).toBeInstanceOf(AgentqError);
      expect({ code: (light as AgentqError).code, message: (light as AgentqError).message }).toEqual({
        code: (full as AgentqError).code,
        message: (full as AgentqError).message,
      });
      expect((light as AgentqError).code).toBe('UNAVAILABLE');
      expect((light as AgentqError).message).toContain('Redis at redis://127.0.0.1:1 is not reachable');
    } finally {
      await records.close();
      await ioredis.close();
    }
  });
});
