import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { contentText, type Message } from '../../shared/contracts/run-record.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import {
  startScriptedOpenAIServer,
  type ScriptedChatRequest,
  type ScriptedOpenAIServer,
  type ScriptedResponse,
} from '../fakes/scripted-openai-server.js';
import { calculatorScript } from '../helpers/time-travel-scripts.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** `brief@<version>`: outline (a model call) → draft (a model call whose prompt is the version's). */
function briefGraph(version: string, draftPrompt: string) {
  return defineGraph({
    name: 'brief',
    version,
    state: { topic: channel.replace(''), outline: channel.replace(''), draft: channel.replace('') },
    initialState: (input: { topic: string }) => ({ topic: input.topic }),
    output: (state) => ({ draft: state.draft }),
  })
    .node('outline', async (state, context) => {
      const call = await callLanguageModel(context, {
        messages: [
          { role: 'system', content: 'Outline the topic in three points.' },
          { role: 'user', content: state.topic },
        ],
      });
      return { outline: call.message.content ?? '' };
    })
    .node('draft', async (state, context) => {
      const call = await callLanguageModel(context, {
        messages: [
          { role: 'system', content: draftPrompt },
          { role: 'user', content: state.outline },
        ],
      });
      return { draft: call.message.content ?? '' };
    })
    .edge(START, 'outline')
    .edge('outline', 'draft')
    .edge('draft', END)
    .build();
}

const briefScript = (request: ScriptedChatRequest): ScriptedResponse =>
  contentText((request.body.messages[0] as Message).content).startsWith('Outline')
    ? { content: '1. queues 2. retries 3. idempotency' }
    : { content: `draft (${(request.body.messages[0] as Message).content})` };

describe('replay a run against its recording (issue 39)', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    env = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'k', LLM_MODEL: 'scripted-chat' },
      graphs: [briefGraph('1', 'Write it plainly.'), briefGraph('2', 'Write it as a poem.')],
    });
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });
  beforeEach(() => server.reset());

  const run = async (graph: string, input: unknown, graphVersion?: string) =>
    env.client.wait((await env.client.enqueue({ graph, input, ...(graphVersion ? { graphVersion } : {}) })).id, {
      timeoutMs: 30_000,
    });
  const replay = async (runId: string, options: Parameters<TestEnv['client']['replay']>[1] = {}) => {
    const before = server.chatRequests().length;
    const started = await env.client.replay(runId, options);
    const done = await env.client.wait(started.id, { timeoutMs: 30_000 });
    return { done, requests: server.chatRequests().length - before, report: await env.client.replayReport(done.id) };
  };

  it('an unchanged graph replays with zero model requests (tools answered from the recording too) and the same output', async () => {
    server.setScript(calculatorScript);
    const original = await run('react-agent', { query: 'what is 6*7?', tools: ['calculator'] });
    expect(original).toMatchObject({ status: 'completed', output: { answer: 'the answer is 42' } });
    expect(server.chatRequests()).toHaveLength(2);
    const { done, requests, report } = await replay(original.id);
    expect(requests).toBe(0);
    expect(done).toMatchObject({
      status: 'completed',
      output: original.output as object,
      replayOf: { runId: original.id },
    });
    // Answered from the recording: nothing was paid, so nothing is counted.
    expect(done.usage).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: 0 });
    expect(report).toEqual({
      runId: done.id,
      replayOf: original.id,
      status: 'completed',
      outcome: 'same',
      diverged: false,
    });
    expect(await env.client.messages(done.id)).toEqual(await env.client.messages(original.id));
  });

  it('after a prompt change (graph version 2) it stops at the first divergence: the step, the node and the diff of the two requests', async () => {
    server.setScript(briefScript);
    const original = await run('brief', { topic: 'job queues' }, '1');
    expect(original).toMatchObject({ status: 'completed', output: { draft: 'draft (Write it plainly.)' } });
    const same = await replay(original.id);
    expect(same).toMatchObject({ requests: 0, report: { diverged: false, outcome: 'same' } });

    const { done, requests, report } = await replay(original.id, { graphVersion: '2' });
    expect(requests).toBe(0);
    expect(done).toMatchObject({ status: 'failed', graphVersion: '2', error: { code: 'REPLAY_DIVERGED' } });
    expect(report).toMatchObject({
      outcome: 'diverged',
      diverged: true,
      step: 1,
      node: 'draft',
      reason: 'request',
      diff: [{ path: 'messages[0].content', recorded: 'Write it plainly.', replayed: 'Write it as a poem.' }],
    });
    // The step before the divergence was replayed from the recording and committed.
    expect((await env.client.steps(done.id)).map((step) => step.node)).toEqual(['outline']);
  });

  it('--continue-live goes on with live calls after the divergence and still reports it', async () => {
    server.setScript(briefScript);
    const original = await run('brief', { topic: 'retries' }, '1');
    const { done, requests, report } = await replay(original.id, { graphVersion: '2', continueLive: true });
    expect(requests).toBe(1);
    expect(done).toMatchObject({ status: 'completed', output: { draft: 'draft (Write it as a poem.)' } });
    expect(report).toMatchObject({ diverged: true, step: 1, node: 'draft', continuedLive: true, outcome: 'diverged' });
    expect(done.usage.inputTokens).toBeGreaterThan(0);
  });

  it('a replay of an unknown run or of a fork is refused; a recording that is gone is RECORDING_UNAVAILABLE saying so', async () => {
    await expect(env.client.replay('run_nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    server.setScript(briefScript);
    const original = await run('brief', { topic: 'expiry' }, '1');
    const fork = await env.client.wait((await env.client.fork(original.id, { from: 1 })).id, { timeoutMs: 30_000 });
    await expect(env.client.replay(fork.id)).rejects.toMatchObject({
      code: 'RECORDING_UNAVAILABLE',
      message: expect.stringContaining(`it is a fork of run ${original.id} from step 1`),
    });
    await env.client.store.redis.del(env.client.store.keys.run(original.id).record);
    await expect(env.client.replay(original.id)).rejects.toMatchObject({
      code: 'RECORDING_UNAVAILABLE',
      message: expect.stringContaining('it has no recording'),
    });
  });
});

describe('replay refusals by what was recorded', () => {
  let server: ScriptedOpenAIServer;
  const envs: TestEnv[] = [];
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ script: briefScript });
  });
  afterAll(async () => {
    for (const env of envs) await env.close();
    await server.close();
  });
  const envWith = async (recording: Record<string, string>) => {
    const env = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', ...recording },
      graphs: [briefGraph('1', 'Write it plainly. '.repeat(100))],
    });
    envs.push(env);
    return env;
  };
  const runBrief = async (env: TestEnv) =>
    env.client.wait((await env.client.enqueue({ graph: 'brief', input: { topic: 'q' } })).id, { timeoutMs: 30_000 });

  it('AGENTQ_RECORDING=steps: the run can be forked but not replayed (its calls were not kept)', async () => {
    const env = await envWith({ AGENTQ_RECORDING: 'steps' });
    const done = await runBrief(env);
    await expect(env.client.replay(done.id)).rejects.toMatchObject({
      code: 'RECORDING_UNAVAILABLE',
      message: expect.stringContaining("AGENTQ_RECORDING was 'steps'"),
    });
    const fork = await env.client.fork(done.id, { from: 1 });
    expect((await env.client.wait(fork.id, { timeoutMs: 30_000 })).status).toBe('completed');
  });

  it('a recording over AGENTQ_RECORDING_MAX_BYTES stops (the run completes) and a replay says where it stopped', async () => {
    const env = await envWith({ AGENTQ_RECORDING_MAX_BYTES: '2048' });
    const done = await runBrief(env);
    expect(done.status).toBe('completed');
    const summary = await env.client.store.recordings.summary(done.id);
    expect(summary).toMatchObject({ mode: 'full', bytes: 2048, over: expect.stringMatching(/^(c:|k:)/) });
    await expect(env.client.replay(done.id)).rejects.toMatchObject({
      code: 'RECORDING_UNAVAILABLE',
      message: expect.stringContaining('AGENTQ_RECORDING_MAX_BYTES'),
    });
  });
});
