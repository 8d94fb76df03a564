import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { Keys } from '../../shared/store/keys.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { createRedis } from '../../shared/redis/create-redis.js';
import type { TokenEvent } from '../../shared/contracts/token-event.js';
import { compareStreamIds } from '../../shared/contracts/stream-cursor.js';
import { TokenHub } from '../../producer/client/token-hub.js';
import type { RunStreamEvent } from '../../producer/client/follow-run.js';
import {
  startScriptedOpenAIServer,
  type ScriptedOpenAIServer,
  type ScriptedResponse,
} from '../fakes/scripted-openai-server.js';
import { readSse, type SseFrame } from '../helpers/api-sse.js';
import { API_KEYS_ENV, bearer, KEYS } from '../helpers/api-test-env.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';

/** A promise the test opens when it is ready. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const ANSWER = 'Streaming tokens arrive one word at a time until the answer is whole.';

/** Live model text: scripted server streaming over HTTP → worker → Redis pub/sub → SSE and the client. */
describe('token streaming', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let api: ApiInstance;
  let tokens: TokenHub;
  let url: string;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ streamChunkDelayMs: 20 });
    env = await startTestEnv({
      env: {
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_API_KEYS: API_KEYS_ENV,
      },
    });
    tokens = new TokenHub(new Keys(env.config.keyPrefix), () => createRedis(env.config.redisUrl, 'blocking'));
    api = await createApi({ config: env.config, client: env.client, logger: createLogger('silent'), tokens });
    url = await api.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await api?.close();
    tokens?.close();
    await env?.close();
    await server?.close();
  });
  beforeEach(() => server.reset());

  const start = async (key: string = KEYS.acmeProducer) => {
    const response = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ graph: 'react-agent', input: { query: 'stream please' } }),
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };
  const events = (runId: string, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${url}/v1/runs/${runId}/events`, {
      headers: { ...bearer(KEYS.acmeProducer), ...headers },
      ...(signal ? { signal } : {}),
    });
  /** Subscribers of the run's token channel, across every process (PUBSUB NUMSUB). */
  const subscribers = async (runId: string) => {
    const reply = (await env.client.store.redis.call(
      'PUBSUB',
      'NUMSUB',
      new Keys(env.config.keyPrefix).tokenChannel(runId),
    )) as [string, number];
    return Number(reply[1]);
  };
  /**
   * Scripts the model to answer only once someone subscribes to the run's tokens, so a test never
   * races the stream on a busy machine; call the returned function with the run id.
   */
  const gatedScript = (responses: ScriptedResponse[]) => {
    const ready = gate();
    server.setScript(async (_request, index) => {
      await ready.promise;
      return responses[index] ?? { status: 500, message: 'script exhausted' };
    });
    return (runId: string) =>
      void eventually(async () => (await subscribers(runId)) >= 1, 30_000, 'a token subscriber').then(
        ready.open,
        ready.open,
      );
  };
  const tokenData = (frames: SseFrame[]) =>
    frames
      .filter((frame) => frame.event === 'token' || frame.event === 'token-reset')
      .map((frame) => JSON.parse(frame.data!) as TokenEvent);

  it('SSE sends the model text live as token events (step, attempt, text) that add up to the committed message, none of them in the event stream', async () => {
    const release = gatedScript([{ content: ANSWER }]);
    const runId = await start();
    release(runId);
    const frames = await readSse((await events(runId)).body!);
    expect(frames.at(-1)?.event).toBe('run-end');
    const live = tokenData(frames);
    expect(live[0]).toMatchObject({ type: 'token-reset', runId, step: 0, attempt: 1, node: 'model' });
    const text = live.filter((event) => event.type === 'token');
    expect(text.length).toBeGreaterThan(5);
    expect(text.map((event) => event.index)).toEqual(text.map((_, index) => index));
    expect(text.every((event) => event.step === 0 && event.attempt === 1 && event.call === 'model')).toBe(true);
    expect(text.map((event) => event.text).join('')).toBe(ANSWER);
    // Each token carries its id in the run's token log (kept while followed), and its frame the stream's
    // position after it: the last committed event and that token.
    expect(
      text.every(
        (event, index) =>
          event.id !== undefined && (index === 0 || compareStreamIds(text[index - 1]!.id!, event.id) < 0),
      ),
    ).toBe(true);
    const tokenFrames = frames.filter((frame) => frame.event === 'token');
    expect(tokenFrames.map((frame) => frame.id!.split('_')[1])).toEqual(text.map((event) => event.id));
    // The first token came before the step's commit: that is what "live" means.
    const firstToken = frames.findIndex((frame) => frame.event === 'token');
    expect(firstToken).toBeLessThan(frames.findIndex((frame) => frame.event === 'step-end'));

    // The committed message is the record; the durable event stream holds no token.
    const messages = await env.client.messages(runId);
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: ANSWER });
    const stored = await env.client.store.eventLog.events(runId);
    expect(stored.some((event) => String(event.type).startsWith('token'))).toBe(false);
    expect(stored.map((event) => event.type)).toEqual(
      frames.filter((frame) => !frame.event?.startsWith('token')).map((frame) => frame.event),
    );
  });

  it('a step retried after its stream broke off says token-reset with the new attempt, then streams the whole answer', async () => {
    const release = gatedScript([{ content: 'half an answer that breaks', failAfterChunks: 3 }, { content: ANSWER }]);
    const runId = await start();
    release(runId);
    const frames = await readSse((await events(runId)).body!);
    expect(frames.at(-1)?.event).toBe('run-end');
    const live = tokenData(frames);
    const resets = live.filter((event) => event.type === 'token-reset');
    expect(resets.map((event) => event.attempt)).toEqual([1, 2]);
    const second = live.slice(live.indexOf(resets[1]!) + 1);
    expect(second.map((event) => event.text).join('')).toBe(ANSWER);
    expect(second.every((event) => event.attempt === 2)).toBe(true);
    expect(frames.some((frame) => frame.event === 'step-retry')).toBe(true);
    expect((await env.client.messages(runId)).at(-1)).toMatchObject({ content: ANSWER });
  });

  it('a subscriber that connects late gets the committed events first, then live tokens; after the end, only committed events', async () => {
    server.setScript([
      { toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }], chunkDelayMs: 0 },
      { content: ANSWER, chunkDelayMs: 60 },
    ]);
    const runId = await start();
    // Join while the second model step streams.
    await eventually(
      async () => (server.chatRequests()[1]?.chunkTimes?.length ?? 0) >= 2,
      15_000,
      'the second answer to stream',
    );
    const frames = await readSse((await events(runId)).body!);
    const firstToken = frames.findIndex((frame) => frame.event === 'token' || frame.event === 'token-reset');
    expect(firstToken).toBeGreaterThan(0);
    // Everything before the first token is committed (has an id), and includes the tool step's end.
    expect(frames.slice(0, firstToken).every((frame) => frame.id !== undefined)).toBe(true);
    expect(frames.slice(0, firstToken).filter((frame) => frame.event === 'step-end').length).toBeGreaterThanOrEqual(2);
    const text = tokenData(frames).filter((event) => event.type === 'token');
    expect(text.every((event) => event.step === 2)).toBe(true);
    expect(ANSWER.endsWith(text.map((event) => event.text).join(''))).toBe(true);

    const after = await readSse((await events(runId)).body!);
    expect(tokenData(after)).toEqual([]);
    // Resuming with Last-Event-ID skips what was seen, tokens or not.
    const middle = after[2]!.id!;
    const resumed = await readSse((await events(runId, { 'last-event-id': middle })).body!);
    expect(resumed.map((frame) => frame.id)).toEqual(after.slice(3).map((frame) => frame.id));
  });

  it('the client library streams committed events and tokens: for await (const event of client.stream(runId))', async () => {
    const release = gatedScript([{ content: ANSWER }]);
    const runId = await start();
    release(runId);
    const seen: RunStreamEvent[] = [];
    for await (const event of env.client.stream(runId)) seen.push(event);
    expect(seen.at(-1)?.type).toBe('run-end');
    const text = seen.filter((event): event is TokenEvent => event.type === 'token').map((event) => event.text);
    expect(text.join('')).toBe(ANSWER);
    expect(seen[0]?.type).toBe('run-start');
  });

  it('agentq events --follow prints the tokens as JSON lines between the committed events', async () => {
    // The model answers once the CLI process has subscribed to the run's tokens.
    const subscribed = gate();
    server.setScript(async () => {
      await subscribed.promise;
      return { content: ANSWER, chunkDelayMs: 10 };
    });
    const runId = await start();
    const printing = runCli(['events', runId, '--follow'], cliEnv(env.config));
    await eventually(async () => (await subscribers(runId)) >= 1, 30_000, 'the CLI to subscribe');
    subscribed.open();
    const printed = await printing;
    expect(printed.code).toBe(0);
    const lines = printed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; text?: string });
    expect(lines.at(-1)?.type).toBe('run-end');
    expect(
      lines
        .filter((line) => line.type === 'token')
        .map((line) => line.text)
        .join(''),
    ).toBe(ANSWER);
  }, 60_000);

  it('unknown runs, other tenants and malformed Last-Event-ID get clear 4xx; a client that leaves mid-stream leaves no listener', async () => {
    expect((await events('no-such-run')).status).toBe(404);
    const release = gatedScript([{ content: ANSWER, chunkDelayMs: 50 }]);
    const runId = await start();
    release(runId);
    const foreign = await fetch(`${url}/v1/runs/${runId}/events`, { headers: bearer(KEYS.globexProducer) });
    expect(foreign.status).toBe(404);
    expect((await events(runId, { 'last-event-id': 'not-an-id' })).status).toBe(400);

    const leaving = new AbortController();
    const response = await events(runId, {}, leaving.signal);
    await readSse(response.body!, (frames) => frames.some((frame) => frame.event === 'token'));
    expect(tokens.listenerCount()).toBe(1);
    leaving.abort();
    await eventually(async () => tokens.listenerCount() === 0, 5000, 'the listener to go');
    expect(tokens.channelCount()).toBe(0);
    await env.client.wait(runId, { timeoutMs: 20_000 });
  });

  it('200 concurrent subscribers to one run: all get the tokens or leave cleanly, no 5xx, and the listener count returns to zero', async () => {
    // The model starts answering once all 200 are subscribed.
    const everyone = gate();
    server.setScript(async () => {
      await everyone.promise;
      return { content: ANSWER, chunkDelayMs: 40 };
    });
    const runId = await start();
    void eventually(async () => tokens.listenerCount() >= 200, 60_000, 'all 200 to subscribe').then(
      everyone.open,
      everyone.open,
    );
    const quitters = new Set<number>();
    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, index) => {
        const controller = new AbortController();
        const response = await events(runId, {}, controller.signal);
        if (response.status >= 500) return { status: response.status, frames: [] as SseFrame[] };
        if (index % 4 === 0) {
          // A quarter leave after their first token.
          quitters.add(index);
          const frames = await readSse(response.body!, (read) => read.some((frame) => frame.event === 'token'));
          controller.abort();
          return { status: response.status, frames };
        }
        return { status: response.status, frames: await readSse(response.body!) };
      }),
    );
    expect(results.map((result) => result.status).filter((status) => status !== 200)).toEqual([]);
    const stayed = results.filter((_, index) => !quitters.has(index));
    expect(stayed.every((result) => result.frames.at(-1)?.event === 'run-end')).toBe(true);
    // Every subscriber that stayed saw the whole text live.
    const texts = stayed.map((result) =>
      tokenData(result.frames)
        .map((event) => event.text ?? '')
        .join(''),
    );
    expect(texts.filter((text) => text !== ANSWER)).toEqual([]);
    await eventually(
      async () => tokens.listenerCount() === 0 && tokens.channelCount() === 0,
      5000,
      'every listener to go',
    );
  }, 120_000);
});
