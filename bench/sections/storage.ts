/**
 * The `storage` section: what a tenant's runs keep in Redis against what its storage budget counts
 * (AGENTQ_TENANT_MAX_BYTES), worker and client in this process, recording on (the default). Per scenario:
 *
 * - `stored_bytes_<s>`: the bytes read back from the runs' keys (hash fields and values, list elements,
 *   stream entries: storedRunBytes), and `redis_bytes_<s>`: MEMORY USAGE of those keys (Redis's overhead in);
 * - `charged_bytes_<s>`: what the budget counts for them (StorageBudget.usage, before and after);
 * - scenarios: `run_5000` (a 5,000-step chain run), `fork` (a fork of it from step 500, run to its end),
 *   `conversation_5` (5 turns of a conversation, 20 steps and messages each); `conversation_turn_<k>_bytes`
 *   the stored bytes of turn k alone (its own messages: the earlier turns' are stored once, in theirs).
 */
import { AgentClient } from '../../producer/client/agent-client.js';
import { StorageBudget } from '../../shared/operations/limits/storage-budget.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { benchConfig } from '../lib/bench-config.js';
import { figureRecorder } from '../lib/figure-recorder.js';
import { storedRunBytes } from '../lib/stored-bytes.js';

async function runStorage({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const { figures, record } = figureRecorder(log);
  const config = benchConfig(redisUrl, 'bst');
  const worker = await startWorker({ config, logger: createLogger('silent'), reconciler: false });
  const client = new AgentClient({ config });
  const { redis, keys } = client.store;
  const budget = new StorageBudget(redis, keys, { defaultMaxBytes: 0, retentionSeconds: config.retentionSeconds });
  const memory = async (runId: string) => {
    let sum = 0;
    for (const key of keys.runAll(runId))
      sum += Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
    return sum;
  };
  const chain = async (tenant: string, steps: number, conversationId?: string) => {
    const queued = await client.enqueue({
      tenant,
      graph: 'chain',
      input: { steps, appendMessages: true },
      options: { maxSteps: steps + 1 },
      ...(conversationId ? { conversationId } : {}),
    });
    const done = await client.wait(queued.id, { timeoutMs: 600_000 });
    if (done.status !== 'completed') throw new Error(`run ${done.id} ${done.status}: ${JSON.stringify(done.error)}`);
    return done.id;
  };
  const measure = async (name: string, runIds: string[], charged: number) => {
    let stored = 0;
    let used = 0;
    for (const runId of runIds) {
      stored += await storedRunBytes(redis, keys, runId);
      used += await memory(runId);
    }
    record(`stored_bytes_${name}`, stored);
    record(`redis_bytes_${name}`, used);
    record(`charged_bytes_${name}`, charged);
  };
  try {
    const steps = quick ? 500 : 5000;
    const long = await chain('long', steps);
    await measure('run_5000', [long], await budget.usage('long'));
    const before = await budget.usage('long');
    // From step 500: the recording of a run this long stops (AGENTQ_RECORDING_MAX_BYTES) a little later.
    const fork = await client.fork(long, { from: 500 });
    if ((await client.wait(fork.id, { timeoutMs: 600_000 })).status !== 'completed') throw new Error('fork failed');
    await measure('fork', [fork.id], (await budget.usage('long')) - before);
    const turns: string[] = [];
    for (let turn = 1; turn <= 5; turn += 1) {
      turns.push(await chain('talk', 20, 'c1'));
      record(`conversation_turn_${turn}_bytes`, await storedRunBytes(redis, keys, turns.at(-1)!));
    }
    await measure('conversation_5', turns, await budget.usage('talk'));
  } finally {
    await client.close();
    await worker.close();
  }
  return figures;
}

export const storageSection: BenchSection = { name: 'storage', run: runStorage };
