import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { calculatorScript } from '../helpers/time-travel-scripts.js';
import { startCountedRedis, type CountedRedis } from '../helpers/counted-redis.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** Bytes the recording's own count says it holds, against what its fields and values weigh. */
async function recordingBytes(redis: CountedRedis, key: string): Promise<{ counted: number; held: number }> {
  const fields = await redis.redis.hgetall(key);
  let held = 0;
  for (const [field, value] of Object.entries(fields)) if (field !== 'bytes') held += field.length + value.length;
  return { counted: Number(fields.bytes ?? 0), held };
}

/**
 * A paid call's recording (time travel, AGENTQ_RECORDING=full) looks up the call, the budget's stop and
 * the call's contents in one read and writes them in one count and one write when they fit the budget;
 * the recording holds the same fields and bytes as when each was written on its own.
 */
describe('recorded paid calls', () => {
  let redis: CountedRedis;
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    redis = await startCountedRedis();
    server = await startScriptedOpenAIServer({ script: calculatorScript });
    env = await startTestEnv({
      env: { REDIS_URL: redis.url, OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' },
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
    await redis?.stop();
  });

  it('a react-agent run: each call and its contents recorded, counted to the byte, with no look-up per content', async () => {
    const before = await redis.calls('hexists');
    const run = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: 'what is 6*7?', tools: ['calculator'] },
    });
    const done = await env.client.wait(run.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    const key = env.client.store.keys.run(run.id).record;
    const fields = await redis.redis.hkeys(key);
    // Two model calls and the tool call, each with its request's contents (messages, the tool list).
    expect(fields.filter((field) => field.startsWith('k:'))).toHaveLength(3);
    expect(fields.filter((field) => field.startsWith('c:')).length).toBeGreaterThanOrEqual(3);
    const { counted, held } = await recordingBytes(redis, key);
    expect(counted).toBe(held);
    // 19 for this run when a recorded call looked up itself, the budget's stop and each of its contents one
    // HEXISTS at a time, and each claim looked for a parallel task's write though its step was the only task.
    expect((await redis.calls('hexists')) - before).toBeLessThanOrEqual(2);
  });

  it('a budget the call does not fit: the contents that fit are recorded, the stop names the first that did not', async () => {
    const small = await startTestEnv({
      env: {
        REDIS_URL: redis.url,
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_RECORDING_MAX_BYTES: '1024',
        AGENTQ_KEY_PREFIX: 'small',
      },
    });
    try {
      const run = await small.client.enqueue({
        graph: 'react-agent',
        input: { query: `what is 6*7? ${'please '.repeat(200)}`, tools: ['calculator'] },
      });
      expect((await small.client.wait(run.id, { timeoutMs: 30_000 })).status).toBe('completed');
      const key = small.client.store.keys.run(run.id).record;
      const fields = await redis.redis.hgetall(key);
      // The budget filled and stopped; nothing past the stop was written.
      expect(fields.bytes).toBe('1024');
      expect(fields.over).toBeDefined();
      expect(fields[fields.over!]).toBeUndefined();
      expect(Object.keys(fields).filter((field) => field.startsWith('k:'))).toHaveLength(0);
    } finally {
      await small.close();
    }
  });
});
