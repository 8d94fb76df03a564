/**
 * The `streaming` section: what live tokens cost. The scripted OpenAI-compatible server
 * streams a 50-word answer at 50 tokens/s (a chunk every 20 ms, after a 300 ms think so the subscriber
 * is in place); a `react-agent` run asks it once; an SSE client follows `GET /v1/runs/:id/events` of a
 * real API over HTTP, worker and API in this process on one Redis.
 *
 * - `ttft_overhead_ms_p50` / `_p95`: time to first token at the SSE client minus the time the model
 *   server wrote its first content chunk (both `Date.now()` in this process), over the runs;
 * - `durable_bytes_per_token`: Redis AOF growth of a streamed run minus that of the same run with
 *   streaming off (AGENTQ_LLM_STREAM=false, answered after as long as the stream takes), per token
 *   streamed: what tokens add to durable storage. The SSE client follows the run, so its tokens are
 *   kept in the run's token log (one XADD each) for a reconnect to resume from. Needs AOF on (the bench
 *   Redis has it). Runs of equal length still differ by a few bytes (ids, timestamps): read a figure
 *   near 0 as 0;
 * - `durable_bytes_per_token_unfollowed`: the same for a streamed run nobody follows (the producer
 *   waits for its end): its tokens are only PUBLISHed, which is not written to the AOF.
 */
import { Redis } from 'ioredis';
import { createApi } from '../../producer/api/create-api.js';
import { AgentClient } from '../../producer/client/agent-client.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { startWorker } from '../../worker/start-worker.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../../test/fakes/scripted-openai-server.js';
import { readSse } from '../../test/helpers/api-sse.js';
import { benchConfig } from '../lib/bench-config.js';
import type { BenchContext, BenchFigures, BenchSection } from '../lib/bench-section.js';
import { figureRecorder } from '../lib/figure-recorder.js';
import { percentile } from '../lib/stats.js';

const WORDS = 50;
const CHUNK_MS = 20;
const ANSWER = Array.from({ length: WORDS }, (_, index) => `token${index}`).join(' ');
const RUNS = { quick: 5, full: 40 };

async function withStack<T>(
  redisUrl: string,
  server: ScriptedOpenAIServer,
  stream: boolean,
  body: (stack: { url: string; client: AgentClient }) => Promise<T>,
): Promise<T> {
  const config = benchConfig(redisUrl, 'bs', {
    OPENAI_BASE_URL: server.url,
    LLM_MODEL: 'scripted-chat',
    AGENTQ_LLM_STREAM: String(stream),
  });
  const worker = await startWorker({ config, logger: createLogger('silent'), reconciler: false });
  const client = new AgentClient({ config });
  const api = await createApi({ config, client, logger: createLogger('silent') });
  try {
    const url = await api.listen({ port: 0, host: '127.0.0.1' });
    return await body({ url, client });
  } finally {
    await api.close();
    await client.close();
    await worker.close();
  }
}

async function runStreaming({ redisUrl, quick, log }: BenchContext): Promise<BenchFigures> {
  const { figures, record } = figureRecorder(log);
  // A plain (not streamed) answer comes when the streamed one would have ended, so both runs last as long
  // and time-driven writes (BullMQ's stalled checks, lock renewals) do not count as token bytes.
  const server = await startScriptedOpenAIServer({
    script: (request) => ({
      content: ANSWER,
      delayMs: request.body.stream ? 300 : 300 + WORDS * CHUNK_MS,
      chunkDelayMs: CHUNK_MS,
    }),
  });
  const redis = new Redis(redisUrl);
  const aofSize = async () => Number(/aof_current_size:(\d+)/.exec(await redis.info('persistence'))?.[1] ?? Number.NaN);
  try {
    const overheads: number[] = [];
    let tokensPerRun = 0;
    const oneRun = async (url: string, client?: AgentClient) => {
      const created = await fetch(`${url}/v1/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ graph: 'react-agent', input: { query: 'stream' } }),
      });
      const { id } = (await created.json()) as { id: string };
      if (client) {
        await client.wait(id, { timeoutMs: 60_000 });
        return { frames: [], firstTokenAt: undefined };
      }
      const response = await fetch(`${url}/v1/runs/${id}/events`);
      let firstTokenAt: number | undefined;
      const frames = await readSse(response.body!, (read) => {
        if (firstTokenAt === undefined && read.some((frame) => frame.event === 'token')) firstTokenAt = Date.now();
        return read.at(-1)?.event === 'run-end';
      });
      return { frames, firstTokenAt };
    };
    await withStack(redisUrl, server, true, async ({ url }) => {
      await oneRun(url); // warm-up: connections, scripts, JIT
      server.reset();
      for (let index = 0; index < (quick ? RUNS.quick : RUNS.full); index += 1) {
        const { frames, firstTokenAt } = await oneRun(url);
        const serverFirst = server.chatRequests().at(-1)?.chunkTimes?.[0];
        tokensPerRun = frames.filter((frame) => frame.event === 'token').length;
        if (firstTokenAt !== undefined && serverFirst !== undefined) overheads.push(firstTokenAt - serverFirst);
      }
    });
    record('ttft_overhead_ms_p50', percentile(overheads, 50));
    record('ttft_overhead_ms_p95', percentile(overheads, 95));
    record('streamed_tokens_per_run', tokensPerRun);

    // Durable bytes: the same run streamed and not, each measured as AOF growth over several runs.
    const runs = quick ? 2 : 5;
    const growth = async (stream: boolean, followed = true) =>
      withStack(redisUrl, server, stream, async ({ url, client }) => {
        const follower = followed ? undefined : client;
        await oneRun(url, follower);
        const before = await aofSize();
        for (let index = 0; index < runs; index += 1) await oneRun(url, follower);
        return ((await aofSize()) - before) / runs;
      });
    const streamed = await growth(true);
    const plain = await growth(false);
    const unfollowed = await growth(true, false);
    const plainUnfollowed = await growth(false, false);
    record('aof_bytes_per_run_streamed', streamed);
    record('aof_bytes_per_run_not_streamed', plain);
    record('durable_bytes_per_token', Math.max(0, streamed - plain) / Math.max(1, tokensPerRun));
    record('durable_bytes_per_token_unfollowed', Math.max(0, unfollowed - plainUnfollowed) / Math.max(1, tokensPerRun));
    return figures;
  } finally {
    redis.disconnect();
    await server.close();
  }
}

export const streamingSection: BenchSection = { name: 'streaming', run: runStreaming };
