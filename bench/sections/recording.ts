/**
 * The `recording` section: what time travel's recording (AGENTQ_RECORDING) costs a run in
 * Redis, and that a replay pays nothing. react-agent runs with 1, 3 and 8 tool rounds (the scripted
 * OpenAI server calls the calculator that many times, then answers), worker and client in this process,
 * once with AGENTQ_RECORDING=full and once with `off`; per run, after it completed:
 *
 * - `record_json_bytes_react_<n>_rounds`: the JSON its recording keeps (what AGENTQ_RECORDING_MAX_BYTES bounds);
 * - `record_redis_bytes_react_<n>_rounds`: MEMORY USAGE of its recording key;
 * - `run_redis_bytes_react_<n>_rounds_full` / `_off`: MEMORY USAGE of all its run keys (meta, state,
 *   history, steps, events, memo, recording) with the recording and without;
 * - `replay_model_requests`: model requests of a replay of the 8-round run (0: nothing paid).
 */
import { randomBytes } from 'node:crypto';
import { contentText, type Message } from '../../shared/contracts/run-record.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { startScriptedOpenAIServer } from '../../test/fakes/scripted-openai-server.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { figureRecorder } from '../lib/figure-recorder.js';

const ROUNDS = [1, 3, 8] as const;

async function runRecording({ redisUrl, log }: BenchContext): Promise<BenchFigures> {
  const { figures, record } = figureRecorder(log);
  // The user's query says how many tool rounds the run makes before the model answers.
  const server = await startScriptedOpenAIServer({
    script: (request) => {
      const messages = request.body.messages as unknown as Message[];
      const rounds = Number(
        /(\d+) rounds/.exec(contentText(messages.find((message) => message.role === 'user')?.content ?? null))?.[1],
      );
      const done = messages.filter((message) => message.role === 'tool').length;
      return done < rounds
        ? { toolCalls: [{ name: 'calculator', arguments: { expression: `${done} + 1` } }] }
        : { content: `After ${done} rounds the answer is ${done}. ${'A sentence of explanation. '.repeat(8)}` };
    },
  });
  try {
    for (const mode of ['full', 'off'] as const) {
      const id = randomBytes(3).toString('hex');
      const config = loadConfig({
        REDIS_URL: redisUrl,
        AGENTQ_KEY_PREFIX: `br${id}`,
        AGENTQ_QUEUE_PREFIX: `brq${id}`,
        AGENTQ_LOG_LEVEL: 'silent',
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_RECORDING: mode,
      });
      const worker = await startWorker({ config, logger: createLogger('silent'), reconciler: false });
      const client = new AgentClient({ config });
      const { redis, keys } = client.store;
      const memory = async (key: string) => Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
      try {
        let longest = '';
        for (const rounds of ROUNDS) {
          const queued = await client.enqueue({
            graph: 'react-agent',
            input: { query: `Add one, ${rounds} rounds, with the calculator.`, tools: ['calculator'] },
          });
          const done = await client.wait(queued.id, { timeoutMs: 60_000 });
          if (done.status !== 'completed')
            throw new Error(`run ${done.id} ended ${done.status}: ${done.error?.message}`);
          const runKeys = Object.values(keys.run(done.id));
          const total = (await Promise.all(runKeys.map(memory))).reduce((sum, bytes) => sum + bytes, 0);
          record(`run_redis_bytes_react_${rounds}_rounds_${mode}`, total);
          if (mode === 'full') {
            record(
              `record_json_bytes_react_${rounds}_rounds`,
              Number(await redis.hget(keys.run(done.id).record, 'bytes')),
            );
            record(`record_redis_bytes_react_${rounds}_rounds`, await memory(keys.run(done.id).record));
          }
          longest = done.id;
        }
        if (mode === 'full') {
          const before = server.chatRequests().length;
          const replay = await client.wait((await client.replay(longest)).id, { timeoutMs: 60_000 });
          if (replay.status !== 'completed') throw new Error(`replay ${replay.id} ended ${replay.status}`);
          record('replay_model_requests', server.chatRequests().length - before);
        }
      } finally {
        await client.close();
        await worker.close();
      }
    }
  } finally {
    await server.close();
  }
  return figures;
}

export const recordingSection: BenchSection = { name: 'recording', run: runRecording };
