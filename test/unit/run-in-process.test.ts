import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START, type AnyGraph } from '../../shared/graph/graph.js';
import { MockLanguageModel, runInProcess } from '../../testing/index.js';
import { contractGraphs } from '../helpers/contract-graphs.js';
import { reactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { ToolRegistry } from '../../worker/agents/tools/tool-registry.js';
import { builtInTools } from '../../worker/agents/tools/built-in-tools.js';

const graphs = new Map(contractGraphs().map((graph) => [graph.name, graph] as const));
const graph = (name: string): AnyGraph => graphs.get(name)!;
const nodes = (steps: { node: string }[]) => steps.map((step) => step.node);

describe('runInProcess: the engine semantics in one process', () => {
  it('runs a chain to its output through the reducers, recording each step, update and message', async () => {
    const result = await runInProcess(graph('contract-chain'), null);
    expect(result.status).toBe('completed');
    expect(result.output).toEqual({ log: ['a', 'b', 'c'], count: 6 });
    expect(result.steps.map(({ superstep, task, node, attempts }) => ({ superstep, task, node, attempts }))).toEqual([
      { superstep: 0, task: 0, node: 'a', attempts: 1 },
      { superstep: 1, task: 0, node: 'b', attempts: 1 },
      { superstep: 2, task: 0, node: 'c', attempts: 1 },
    ]);
    expect(result.steps[1]!.update).toEqual({ log: 'b', count: 2 });
    expect(result.messages).toEqual([{ role: 'assistant', content: 'from b' }]);
  });

  it('follows routers, back-edges included, to the END a router picks', async () => {
    // 2 is small (tripled to 6), 6 is small (tripled to 18): then the router after 'small' ends the run.
    const result = await runInProcess(graph('contract-router'), { n: 2 });
    expect(nodes(result.steps)).toEqual(['classify', 'small', 'classify', 'small']);
    expect(result.output).toEqual(['small', 'handled-small', 'small', 'handled-small']);
    expect(nodes((await runInProcess(graph('contract-router'), { n: 20 })).steps)).toEqual(['classify', 'big']);
  });

  it('fans out with Send (one task per payload, merged in task order) and runs the join once', async () => {
    const result = await runInProcess(graph('contract-fan-out'), { items: [3, 1, 2] });
    expect(result.steps.map((step) => [step.superstep, step.task, step.node, step.arg ?? null])).toEqual([
      [0, 0, 'plan', null],
      [1, 0, 'square', 3],
      [1, 1, 'square', 1],
      [1, 2, 'square', 2],
      [2, 0, 'join', null],
    ]);
    expect(result.output).toEqual({ items: [3, 1, 2], squares: [9, 1, 4], done: true });
  });

  it('runs a subgraph as nodes of the parent, each its own step', async () => {
    const result = await runInProcess(graph('contract-subgraph'), null);
    expect(nodes(result.steps)).toEqual(['pre', 'sub/x', 'sub/y', 'post']);
    expect(result.output).toEqual(['pre', 'x', 'y', 'post']);
  });

  it('stops at an interrupt; resume re-runs that step with the answer; a second resume is refused', async () => {
    const waiting = await runInProcess(graph('contract-interrupt'), null);
    expect(waiting.status).toBe('waiting');
    expect(waiting.interrupt).toEqual({
      node: 'ask',
      stepId: 's1.t0',
      request: { question: 'approve "pay 100 EUR"?' },
    });
    expect(nodes(waiting.steps)).toEqual(['write']);
    const done = await waiting.resume({ approved: true });
    expect(done).toMatchObject({ status: 'completed', output: { draft: 'pay 100 EUR', verdict: 'approved' } });
    expect(nodes(done.steps)).toEqual(['write', 'ask']);
    await expect(done.resume({})).rejects.toThrow(/only a waiting run can be resumed/);
  });

  it('refuses an interrupt that asks for a callback URL, naming what it needs (no URL could reach the run)', async () => {
    const asking = defineGraph({
      name: 'asks-by-url',
      state: { got: channel.replace<unknown>(null) },
      output: (s) => s.got,
    })
      .node('ask', (_state, context) => ({ got: context.interrupt({ q: 'ok?' }, { callback: true }) }))
      .edge(START, 'ask')
      .edge('ask', END)
      .build();
    const result = await runInProcess(asking, null);
    expect(result).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(result.error?.message).toMatch(/callback needs a worker/);
  });

  it('retries a retryable failure under the node policy, recording the failed attempt', async () => {
    const result = await runInProcess(graph('contract-retry'), null);
    expect(result.status).toBe('completed');
    expect(result.steps).toMatchObject([{ node: 'flaky', attempts: 2, update: { tries: 2 } }]);
    expect(result.retries).toMatchObject([{ node: 'flaky', attempt: 1, error: { code: 'PROVIDER_ERROR' } }]);
  });

  it('fails the run with the node and attempt when attempts run out or the error is not retryable', async () => {
    let runs = 0;
    const broken = defineGraph({ name: 'broken', state: {} })
      .node(
        'boom',
        () => {
          runs += 1;
          throw new Error('kaput');
        },
        { retry: { maxAttempts: 2, retryOn: () => true } },
      )
      .edge(START, 'boom')
      .edge('boom', END)
      .build();
    const result = await runInProcess(broken, null);
    expect(runs).toBe(2);
    expect(result).toMatchObject({ status: 'failed', error: { node: 'boom', attempt: 2, message: 'kaput' } });
  });

  it('aborts a node past its timeout (retryable TIMEOUT) and keeps its memoised work across attempts', async () => {
    let paid = 0;
    const slow = defineGraph({ name: 'slow', state: { value: channel.replace(0) }, output: (s) => s.value })
      .node(
        'slow',
        async (_state, context) => {
          const value = await context.memo('paid', async () => ++paid);
          if (context.attempt < 3) await new Promise((resolve) => setTimeout(resolve, 1000));
          return { value };
        },
        { timeoutMs: 20, retry: { maxAttempts: 3, initialDelayMs: 1 } },
      )
      .edge(START, 'slow')
      .edge('slow', END)
      .build();
    const result = await runInProcess(slow, null);
    expect(result).toMatchObject({ status: 'completed', output: 1 });
    expect(result.retries.map((retry) => retry.error.code)).toEqual(['TIMEOUT', 'TIMEOUT']);
    expect(paid).toBe(1);
  });

  it('enforces the run limits: maxSteps and invalid input fail the run with their codes', async () => {
    expect(await runInProcess(graph('contract-chain'), null, { maxSteps: 2 })).toMatchObject({
      status: 'failed',
      error: { code: 'MAX_STEPS', node: 'c' },
    });
    const typed = defineGraph({ name: 'typed', input: z.object({ n: z.number() }), state: {} })
      .node('a', () => ({}))
      .edge(START, 'a')
      .edge('a', END)
      .build();
    expect(await runInProcess(typed, { n: 'x' })).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
  });

  it('gives nodes the history committed before their superstep, and the seeded messages', async () => {
    const seen: number[] = [];
    const talk = defineGraph({ name: 'talk', state: {} })
      .node('one', async (_s, context) => {
        seen.push((await context.history()).length);
        return { messages: [{ role: 'assistant' as const, content: 'one' }] };
      })
      .node('two', async (_s, context) => {
        seen.push((await context.history()).length);
        return {};
      })
      .edge(START, 'one')
      .edge('one', 'two')
      .edge('two', END)
      .build();
    const result = await runInProcess(talk, null, { messages: [{ role: 'user', content: 'hi' }] });
    expect(seen).toEqual([1, 2]);
    expect(result.messages.map((message) => message.content)).toEqual(['hi', 'one']);
  });
});

describe('runInProcess with the built-in react agent and a scripted MockLanguageModel', () => {
  it('runs a tool call the model scripted, then the final answer, with usage and events recorded', async () => {
    const llm = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6 * 7' } }] }, 'It is 42.'],
    });
    const result = await runInProcess(
      reactAgentGraph,
      { query: 'what is 6 * 7?' },
      { services: { languageModel: llm, tools: new ToolRegistry(builtInTools()) } },
    );
    expect(result.status).toBe('completed');
    expect(llm.calls).toHaveLength(2);
    const toolMessage = llm.calls[1]!.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toContain('42');
    expect(result.events.map((event) => event.type)).toEqual(expect.arrayContaining(['tool-call', 'tool-result']));
    expect(result.usage).toMatchObject({ inputTokens: 20, outputTokens: 10 });
    expect(JSON.stringify(result.output)).toContain('It is 42.');
  });

  it('fails the run with the model error when the script throws a non-retryable error', async () => {
    const llm = new MockLanguageModel({ generate: new Error('model down') });
    const result = await runInProcess(reactAgentGraph, { query: 'hi' }, { services: { languageModel: llm } });
    expect(result.status).toBe('failed');
    expect(result.error?.message).toContain('model down');
  });
});

describe('MockLanguageModel replies', () => {
  it('streams text pieces to onTextDelta, and scripts refusals and tool calls in short', async () => {
    const llm = new MockLanguageModel({
      generate: [
        { text: 'Hello there', stream: ['Hel', 'lo', ' there'] },
        { refusal: 'I cannot help with that.' },
        { toolCalls: [{ name: 'lookup', arguments: { q: 'x' } }] },
      ],
    });
    const pieces: string[] = [];
    const first = await llm.generate({ messages: [], onTextDelta: (text) => pieces.push(text) });
    expect(pieces).toEqual(['Hel', 'lo', ' there']);
    expect(first).toMatchObject({ message: { content: 'Hello there' }, finishReason: 'stop' });
    const refused = await llm.generate({ messages: [] });
    expect(refused).toMatchObject({
      message: { content: null },
      refusal: 'I cannot help with that.',
      finishReason: 'refusal',
    });
    const called = await llm.generate({ messages: [] });
    expect(called.finishReason).toBe('tool_calls');
    expect(called.message.tool_calls).toEqual([
      { id: 'call_3_0', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
    ]);
    await expect(llm.generate({ messages: [] })).rejects.toThrow(/no result scripted for call 4/);
  });
});
