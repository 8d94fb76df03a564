import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { startPrivateRedis, type PrivateRedis } from '../../shared/redis/private-redis-server.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import { startWorker, type AgentWorker } from '../../worker/start-worker.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { eventually, startTestEnv, testConfig, type TestEnv } from '../helpers/test-env.js';
import { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import { Keys } from '../../shared/store/keys.js';

/** One memoised model call per run: the node the Redis-full test makes pay while Redis refuses writes. */
const paidOnce = defineGraph({
  name: 'paid-once',
  state: { answer: channel.replace('') },
  output: (state) => ({ answer: state.answer }),
})
  .node('ask', async (_state, context) => {
    const call = await callLanguageModel(context, { messages: [{ role: 'user', content: 'worth paying for' }] });
    return { answer: call.message.content ?? '' };
  })
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

/** A node that holds its thread past the run's deadline (as a paused process would) and then returns. */
const overrun = defineGraph({ name: 'overrun', state: { done: channel.replace(false) } })
  .node('hold', async () => {
    const until = Date.now() + 1200;
    while (Date.now() < until) {
      // the deadline timer cannot fire: this thread is busy, as a SIGSTOPped one is stopped
    }
    return { done: true };
  })
  .edge(START, 'hold')
  .edge('hold', END)
  .build();

describe('Redis faults and late commits (issue 34)', () => {
  let env: TestEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  it('a step that ends past its run deadline is not committed: the run fails with DEADLINE', async () => {
    // The client shares the blocked thread: a command timeout longer than the block.
    env = await startTestEnv({ graphs: [overrun], env: { AGENTQ_REDIS_COMMAND_TIMEOUT_MS: '5000' } });
    const queued = await env.client.enqueue({ graph: 'overrun', input: null, options: { deadlineMs: 300 } });
    const done = await env.client.wait(queued.id, { timeoutMs: 15_000 });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'DEADLINE', node: 'hold' } });
    expect(done.error?.message).toMatch(/before node 'hold' could commit/);
    expect(await env.client.store.reads.state(queued.id)).toEqual({ done: false });
  });

  describe('on a Redis that fills up', () => {
    let redis: PrivateRedis;
    let admin: Redis;
    let server: ScriptedOpenAIServer;
    let worker: AgentWorker | undefined;
    let client: AgentClient | undefined;
    beforeAll(async () => {
      redis = await startPrivateRedis({});
      admin = new Redis(redis.url);
    });
    afterEach(async () => {
      await admin.config('SET', 'maxmemory', '0');
      await client?.close();
      await worker?.close();
      await server?.close();
    });
    afterAll(async () => {
      admin.disconnect();
      await redis.stop();
    });

    const full = () => admin.config('SET', 'maxmemory', '1');
    const roomy = () => admin.config('SET', 'maxmemory', '0');

    it('Redis full as a paid response is saved: the step is parked (no attempt spent), its retry uses the response kept in memory, the model is asked once', async () => {
      // Redis refuses writes from the moment the request arrives until 1.5 s after.
      server = await startScriptedOpenAIServer({
        script: () => {
          void full().then(() => setTimeout(() => void roomy(), 1500));
          return { content: 'paid once', delayMs: 300, usage: { prompt_tokens: 10, completion_tokens: 2 } };
        },
      });
      const config = testConfig({
        REDIS_URL: redis.url,
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_REDIS_FAULT_DELAY_MS: '300',
      });
      worker = await startWorker({
        config,
        graphs: [paidOnce],
        logger: createLogger('silent'),
        reconciler: false,
      });
      client = new AgentClient({ config });
      const queued = await client.enqueue({ graph: 'paid-once', input: null });
      const done = await client.wait(queued.id, { timeoutMs: 30_000 });
      expect(done).toMatchObject({ status: 'completed', output: { answer: 'paid once' } });
      expect(server.chatRequests()).toHaveLength(1);
      const steps = await client.steps(queued.id);
      expect(steps.map((step) => step.attempts)).toEqual([1]);
      expect(done.usage).toMatchObject({ inputTokens: 10, outputTokens: 2 });
      // The tenant's budget counts the call once Redis takes writes again (its count was refused at first).
      const budget = new TenantBudget(admin, new Keys(config.keyPrefix));
      await eventually(
        async () => (await budget.usage(config.tenant)).month.calls === 1,
        10_000,
        'the call to be counted against the tenant budget',
      );
      expect((await budget.usage(config.tenant)).month).toMatchObject({ calls: 1, tokens: 12 });
    }, 60_000);

    it('a producer enqueueing while Redis is full gets REDIS_FULL saying what to do, not the raw OOM reply', async () => {
      const config = testConfig({ REDIS_URL: redis.url });
      client = new AgentClient({ config });
      await client.enqueue({ graph: 'chain', input: { steps: 1 } }, { queueUnserved: true });
      await full();
      const refused = await client
        .enqueue({ graph: 'chain', input: { steps: 1 } }, { queueUnserved: true })
        .catch((error: unknown) => error);
      expect(refused).toMatchObject({ code: 'REDIS_FULL', retryable: true });
      expect((refused as Error).message).toMatch(/Redis is full and refused to enqueue the run .*maxmemory/);
    });
  });
});
