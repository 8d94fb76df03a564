import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message, RunRecord } from '../../shared/contracts/run-record.js';
import { expertSystemPrompt } from '../../worker/agents/graphs/multi-agent.js';
import {
  startScriptedOpenAIServer,
  type ScriptedChatRequest,
  type ScriptedOpenAIServer,
  type ScriptedResponse,
} from '../fakes/scripted-openai-server.js';
import { calculatorScript, lastMessage } from '../helpers/time-travel-scripts.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { z } from 'zod';
import { defineTool } from '../../shared/ports/define-tool.js';

const experts = [
  { name: 'redis', description: 'Redis persistence, AOF, RDB snapshots' },
  { name: 'queues', description: 'Job queues, BullMQ, retries, backoff' },
  { name: 'chef', description: 'French cooking, sauces, bread' },
];
const systemOf = (request: ScriptedChatRequest) => (request.body.messages[0] as Message).content;

/** multi-agent (recall 'first'): the lead consults two colleagues in parallel, then answers. */
function multiAgentScript(request: ScriptedChatRequest): ScriptedResponse {
  if (systemOf(request) === expertSystemPrompt(experts[1]!)) return { content: 'queues say: idempotent handlers' };
  if (systemOf(request) === expertSystemPrompt(experts[2]!)) return { content: 'chef says: a roux' };
  if (request.body.tools && lastMessage(request).role === 'user')
    return {
      toolCalls: [
        { name: 'queues', arguments: { question: 'retries?' } },
        { name: 'chef', arguments: { question: 'sauce?' } },
      ],
    };
  return { content: 'combined answer' };
}

/** Fork: `agentq fork <runId> --from <step>` through the client, model requests counted on the scripted server. */
describe('fork a run from a step (issue 39)', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    env = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'k', LLM_MODEL: 'scripted-chat' },
    });
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });
  beforeEach(() => server.reset());

  const run = async (graph: string, input: unknown) =>
    env.client.wait((await env.client.enqueue({ graph, input })).id, { timeoutMs: 30_000 });
  /** Forks and waits; → the fork's record and the model requests it made. */
  const fork = async (runId: string, from: number, set?: Record<string, unknown>) => {
    const before = server.chatRequests().length;
    const started = await env.client.fork(runId, { from, ...(set ? { set } : {}) });
    const done = await env.client.wait(started.id, { timeoutMs: 30_000 });
    return { done, requests: server.chatRequests().length - before, started };
  };
  /** What a run looks like from outside: record, steps and history. */
  const snapshot = async (runId: string) => ({
    record: await env.client.get(runId),
    steps: await env.client.steps(runId),
    messages: await env.client.messages(runId),
  });

  it('react-agent: forks at the first, a middle and the last step; only steps from the fork point call the model', async () => {
    server.setScript(calculatorScript);
    const original = await run('react-agent', { query: 'what is 6*7?', tools: ['calculator'] });
    expect(original).toMatchObject({ status: 'completed', output: { answer: 'the answer is 42' } });
    expect(server.chatRequests()).toHaveLength(2);
    const before = await snapshot(original.id);
    expect(before.steps.map((step) => step.node)).toEqual(['model', 'tool', 'model']);

    for (const [from, expected] of [
      [0, 2],
      [1, 1],
      [2, 1],
    ] as const) {
      const { done, requests, started } = await fork(original.id, from);
      expect(started.forkOf).toEqual({ runId: original.id, step: from });
      expect(done).toMatchObject({ status: 'completed', output: { answer: 'the answer is 42' } });
      expect(requests, `model requests of the fork from step ${from}`).toBe(expected);
      const steps = await env.client.steps(done.id);
      expect(steps.map((step) => step.node)).toEqual(['model', 'tool', 'model']);
      // Steps before the fork point are the original's, marked with the run they ran in; the rest are the fork's.
      expect(steps.slice(0, from)).toEqual(
        before.steps.slice(0, from).map((step) => ({ ...step, inheritedFrom: original.id })),
      );
      expect(steps.slice(from).every((step) => step.inheritedFrom === undefined)).toBe(true);
      const history = await env.client.messages(done.id);
      expect(validateHistory(history)).toEqual([]);
      expect(history.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
      const events = await env.client.store.eventLog.events(done.id);
      expect(events[0]).toMatchObject({ type: 'run-fork', data: { runId: original.id, step: from } });
    }
    // The original is untouched.
    expect(await snapshot(original.id)).toEqual(before);
  });

  it('react-agent: a parallel superstep forked at its second task keeps the first task (not run again) and runs the rest', async () => {
    server.setScript((request) =>
      lastMessage(request).role === 'user'
        ? {
            toolCalls: [
              { name: 'calculator', arguments: { expression: '1+1' } },
              { name: 'calculator', arguments: { expression: '2+2' } },
            ],
          }
        : { content: 'done' },
    );
    const original = await run('react-agent', { query: 'two sums', tools: ['calculator'] });
    expect(original.status).toBe('completed');
    const steps = await env.client.steps(original.id);
    expect(steps.map((step) => [step.superstep, step.node])).toEqual([
      [0, 'model'],
      [1, 'tool'],
      [1, 'tool'],
      [2, 'model'],
    ]);
    const { done, requests } = await fork(original.id, 2);
    expect(done.status).toBe('completed');
    expect(requests).toBe(1);
    const forked = await env.client.steps(done.id);
    expect(forked.slice(0, 2).map((step) => step.inheritedFrom)).toEqual([original.id, original.id]);
    expect(forked[2]).toMatchObject({ superstep: 1, task: steps[2]!.task, node: 'tool' });
    expect(forked[2]!.inheritedFrom).toBeUndefined();
    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history).toEqual(await env.client.messages(original.id));
  });

  it('multi-agent: forks at the first step, inside the parallel consult superstep and at the last step', async () => {
    server.setScript(multiAgentScript);
    const input = { query: 'retries and sauces?', experts, topN: 3, recall: 'first' };
    const original = await run('multi-agent', input);
    expect(original).toMatchObject({ status: 'completed', output: { answer: 'combined answer' } });
    expect(server.chatRequests()).toHaveLength(4);
    const steps = await env.client.steps(original.id);
    expect(steps.map((step) => step.node)).toEqual(['recall', 'lead', 'consult', 'consult', 'lead']);
    for (const [from, expected] of [
      [0, 4],
      [3, 2],
      [4, 1],
    ] as const) {
      const { done, requests } = await fork(original.id, from);
      expect(done, `fork from step ${from}`).toMatchObject({ status: 'completed', output: original.output as object });
      expect(requests, `model requests of the fork from step ${from}`).toBe(expected);
      expect(validateHistory(await env.client.messages(done.id))).toEqual([]);
      expect((await env.client.steps(done.id)).map((step) => step.node)).toEqual(steps.map((step) => step.node));
    }
  });

  it('a state patch replaces a key of the fork (the original untouched); a key not in the state or of another kind is INVALID_INPUT naming it', async () => {
    server.setScript(calculatorScript);
    const original = await run('react-agent', { query: 'what is 6*7?', tools: ['calculator'] });
    const { done, requests } = await fork(original.id, 0, { query: 'what is 6*7 really?' });
    expect(done.status).toBe('completed');
    expect(done.forkOf).toEqual({ runId: original.id, step: 0, patched: ['query'] });
    expect(requests).toBe(2);
    const asked = server.chatRequests().at(-2)!;
    expect(lastMessage(asked).content).toContain('what is 6*7 really?');
    expect((await env.client.messages(original.id))[1]!.content).not.toContain('really');

    await expect(env.client.fork(original.id, { from: 0, set: { qeury: 'x' } })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('set.qeury: the state of run'),
    });
    await expect(env.client.fork(original.id, { from: 0, set: { toolRounds: 'many' } })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining("set.toolRounds: state key 'toolRounds' holds a number"),
    });
  });

  it('an unknown run or step is NOT_FOUND; nothing is created', async () => {
    server.setScript(calculatorScript);
    const original = await run('react-agent', { query: 'what is 6*7?', tools: ['calculator'] });
    await expect(env.client.fork('run_nope', { from: 0 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(env.client.fork(original.id, { from: 3 })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining('fork from one of its steps 0–2'),
    });
    await expect(env.client.fork(original.id, { from: -1 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a cancelled run forks from the step it stopped at, its state patched (no more sleeping); a running run is refused', async () => {
    const slow = await env.client.enqueue({ graph: 'chain', input: { steps: 4, sleepMs: 400 } });
    await eventually(async () => ((await env.client.get(slow.id))?.stepCount ?? 0) >= 2, 15_000, 'two steps');
    await expect(env.client.fork(slow.id, { from: 0 })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringContaining('only a finished run or one waiting on an interrupt can be forked'),
    });
    await env.client.cancel(slow.id);
    const cancelled = await env.client.wait(slow.id, { timeoutMs: 30_000 });
    expect(cancelled.status).toBe('cancelled');
    const { done } = await fork(cancelled.id, cancelled.stepCount, { sleepMs: 0 });
    expect(done).toMatchObject({ status: 'completed', stepCount: 4 });
    expect((await env.client.steps(done.id)).filter((step) => step.inheritedFrom === cancelled.id)).toHaveLength(
      cancelled.stepCount,
    );
  });

  it('a failed run forks from its failed step, which runs again', async () => {
    server.setScript([
      { toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] },
      { status: 400, message: 'bad request from the provider' },
    ]);
    const failed = await run('react-agent', { query: 'what is 6*7?', tools: ['calculator'] });
    expect(failed).toMatchObject({ status: 'failed', stepCount: 2 });
    server.setScript([{ content: 'recovered' }]);
    const { done, requests } = await fork(failed.id, 2);
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'recovered' } });
    expect(requests).toBe(1);
  });
});

/** A run created with AGENTQ_RECORDING=off has nothing to fork from: a clear refusal, naming why. */
describe('fork without a recording', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({ script: calculatorScript });
    env = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat', AGENTQ_RECORDING: 'off' },
    });
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });

  it('is RECORDING_UNAVAILABLE naming AGENTQ_RECORDING; the run keeps no recording key', async () => {
    const done: RunRecord = await env.client.wait(
      (await env.client.enqueue({ graph: 'react-agent', input: { query: 'q', tools: ['calculator'] } })).id,
      { timeoutMs: 30_000 },
    );
    expect(done.status).toBe('completed');
    await expect(env.client.fork(done.id, { from: 1 })).rejects.toMatchObject({
      code: 'RECORDING_UNAVAILABLE',
      message: expect.stringContaining('AGENTQ_RECORDING was off'),
    });
    expect(await env.client.store.redis.exists(env.client.store.keys.run(done.id).record)).toBe(0);
  });
});

/** A run paused at an interrupt (a tool call waiting for approval) forks too; the original keeps waiting. */
describe('fork a waiting run', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  const refunds: string[] = [];
  const refund = defineTool({
    name: 'refund',
    description: 'Refunds an order (a person approves each refund)',
    input: z.object({ order: z.string() }),
    requiresApproval: true,
    execute: ({ order }, { runId }) => {
      refunds.push(`${runId} ${order}`);
      return { refunded: order };
    },
  });
  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      script: (request) =>
        lastMessage(request).role === 'user'
          ? { toolCalls: [{ name: 'refund', arguments: { order: 'A-17' } }] }
          : { content: 'Refunded.' },
    });
    env = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' },
      tools: [refund],
    });
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });

  it('forks from the step that waits (it asks again) and from an earlier one; answering the fork leaves the original waiting', async () => {
    const queued = await env.client.enqueue({
      graph: 'react-agent',
      input: { query: 'refund A-17', tools: ['refund'] },
    });
    const waiting = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(waiting).toMatchObject({ status: 'waiting', stepCount: 1, interrupt: { node: 'tool' } });

    const atWait = await env.client.wait((await env.client.fork(waiting.id, { from: 1 })).id, { timeoutMs: 30_000 });
    expect(atWait).toMatchObject({
      status: 'waiting',
      interrupt: { node: 'tool' },
      forkOf: { runId: waiting.id, step: 1 },
    });
    expect(server.chatRequests()).toHaveLength(1);
    await env.client.resume(atWait.id, { approved: true });
    expect(await env.client.wait(atWait.id, { timeoutMs: 30_000 })).toMatchObject({
      status: 'completed',
      output: { answer: 'Refunded.' },
    });
    expect(refunds).toEqual([`${atWait.id} A-17`]);
    expect(server.chatRequests()).toHaveLength(2);

    const fromStart = await env.client.wait((await env.client.fork(waiting.id, { from: 0 })).id, { timeoutMs: 30_000 });
    expect(fromStart.status).toBe('waiting');
    expect(server.chatRequests()).toHaveLength(3);
    expect((await env.client.get(waiting.id))?.status).toBe('waiting');
  });
});
