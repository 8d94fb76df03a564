import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { inject } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig, type Config } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { shardOf, stepQueuePrefix } from '../../shared/contracts/shards.js';
import { startWorker, type AgentWorker, type StartWorkerOptions } from '../../worker/start-worker.js';
import { loadScaledMs } from './load-scale.js';

/**
 * A config of its own for one test: the shared private redis-server, and key and queue prefixes no
 * other test uses, so tests never see each other's runs or jobs.
 */
export function testConfig(env: Record<string, string> = {}): Config {
  const id = randomBytes(4).toString('hex');
  return loadConfig({
    REDIS_URL: inject('redisUrl'),
    AGENTQ_KEY_PREFIX: `t${id}`,
    AGENTQ_QUEUE_PREFIX: `q${id}`,
    AGENTQ_LOG_LEVEL: process.env.AGENTQ_LOG_LEVEL ?? 'silent',
    AGENTQ_SHUTDOWN_GRACE_MS: '2000',
    // A graph no live worker serves fails at once, as a raw job's unknown graph should in most tests.
    AGENTQ_UNSERVED_GRAPH_WAIT_MS: '0',
    // The production default (750 ms) is a fail-fast bound for a quiet Redis nearby. Here one redis-server
    // serves every test file of a busy two-core machine, where a PING may wait seconds for a CPU: at
    // 750 ms the API would answer 503 and the fuzzers would report it. Tests of the fail-fast behaviour
    // set 750 themselves.
    AGENTQ_REDIS_COMMAND_TIMEOUT_MS: String(loadScaledMs(5000)),
    // Likewise a worker's step commands and its data-path watch: stretched with the load, so a slow
    // machine's late replies do not park steps or stop a worker's beat.
    AGENTQ_STEP_REDIS_TIMEOUT_MS: String(loadScaledMs(5000)),
    // Lexical unless a test asks for an embedder: only the tests of the local model load it.
    ...(env.EMBED_MODEL ? {} : { EMBED_PROVIDER: 'none' }),
    ...env,
  });
}

export interface TestEnv {
  config: Config;
  client: AgentClient;
  worker: AgentWorker;
  /** A queue of the test's config; the step queue is a shard's: the one a run id lives on, or a shard number (shard 0 without). */
  queue(name: string, runIdOrShard?: string | number): Queue;
  close(): Promise<void>;
}

/** A worker and a client on a fresh test config; `close()` stops both. */
export async function startTestEnv(
  options: Omit<StartWorkerOptions, 'config'> & { env?: Record<string, string> } = {},
): Promise<TestEnv> {
  const { env, ...workerOptions } = options;
  const config = testConfig(env);
  const worker = await startWorker({
    config,
    logger: createLogger(config.logLevel),
    reconciler: false,
    ...workerOptions,
  });
  const client = new AgentClient({ config });
  const queues: Queue[] = [];
  return {
    config,
    client,
    worker,
    queue(name: string, runIdOrShard?: string | number) {
      const shard = typeof runIdOrShard === 'string' ? shardOf(runIdOrShard, config.shards) : (runIdOrShard ?? 0);
      const prefix =
        name === STEP_QUEUE ? stepQueuePrefix(config.queuePrefix, shard, config.shards) : config.queuePrefix;
      const queue = new Queue(name, { connection: { url: config.redisUrl!, maxRetriesPerRequest: null }, prefix });
      queues.push(queue);
      return queue;
    },
    async close() {
      await client.close();
      await worker.close();
      await Promise.all(queues.map((queue) => queue.close()));
    },
  };
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
