import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, Send, START } from '../../shared/graph/graph.js';
import { defineTool } from '../../shared/ports/define-tool.js';
import type { ToolCall } from '../../shared/ports/language-model.js';
import { MockLanguageModel, runInProcess, type InProcessResult } from '../../testing/index.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import { createReactAgentGraph, reactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import { ragAgentGraph } from '../../worker/agents/rag/rag-agent.js';
import { multiAgentGraph } from '../../worker/agents/graphs/multi-agent.js';
import { reflectGraph } from '../../worker/agents/graphs/reflect.js';
import { runToolCall, runToolsOf } from '../../worker/agents/index.js';
import { builtInTools } from '../../worker/agents/tools/built-in-tools.js';
import { ToolRegistry } from '../../worker/agents/tools/tool-registry.js';
import { transfer, transfers, wire, wired } from '../helpers/agent-fixtures.js';

// The one tool-execution path (worker/agents/tools/run-tool-call.ts) under every graph that runs tools:
// approval, the tool's own beforeToolCall, the operator's allow predicate and `tools: []`.

/** A transfer tool that protects itself: over 100 is vetoed whichever graph calls it. */
const guardedTransfer = defineTool({
  name: 'guarded_transfer',
  description: 'Transfers money (at most 100 without a person)',
  input: z.object({ to: z.string(), amount: z.number() }),
  beforeToolCall: ({ arguments: args }) =>
    (args as { amount: number }).amount > 100
      ? { action: 'veto', message: 'Transfers over 100 need a person; tell the user.' }
      : undefined,
  execute: ({ to, amount }) => {
    transfers.push({ to, amount });
    return { sent: amount, to };
  },
});

const registry = () => new ToolRegistry([...builtInTools(), wire, transfer, guardedTransfer]);
const toolMessages = (result: InProcessResult) =>
  result.messages.filter((message) => message.role === 'tool').map((message) => message.content);

/** A graph of one's own: one model call, each tool call its own `tool` step through the exported helpers. */
const customGraph = defineGraph({
  name: 'custom-tools',
  input: z.object({ query: z.string(), tools: z.array(z.string()).optional() }),
  state: {
    query: channel.replace(''),
    tools: channel.replace<string[] | null>(null),
    calls: channel.replace<ToolCall[]>([]),
    answer: channel.replace(''),
  },
  initialState: (input) => ({ query: input.query, tools: input.tools ?? null }),
  output: (state) => ({ answer: state.answer }),
})
  .node('model', async (state, context) => {
    const tools = await runToolsOf(context, state.tools ?? undefined);
    const response = await callLanguageModel(context, {
      messages: [{ role: 'user', content: state.query }],
      ...(tools.length > 0 ? { tools: tools.map((tool) => tool.describe()) } : {}),
    });
    return {
      messages: [{ role: 'user', content: state.query }, response.message],
      calls: response.message.tool_calls ?? [],
      answer: response.message.content ?? '',
    };
  })
  .node('tool', async (state, context) => {
    const tools = await runToolsOf(context, state.tools ?? undefined);
    const { message } = await runToolCall(context, { tools });
    return { messages: [message] };
  })
  .route('model', (state) => (state.calls.length > 0 ? state.calls.map((call) => new Send('tool', call)) : END), [
    'tool',
    END,
  ])
  .edge(START, 'model')
  .edge('tool', END)
  .build();

const wireCall = { toolCalls: [{ name: 'wire', arguments: { amount: 999_999 } }] };
/** A rag-agent run whose one round is the tool call, so the answer that follows needs no search. */
const ragInput = (tools: string[]) => ({ query: 'wire it', collection: 'c', max_iterations: 1, tools });

describe('one tool-execution path', () => {
  beforeEach(() => {
    wired.length = 0;
    transfers.length = 0;
  });

  /** Runs a graph whose model calls `wire` first: it must park, run nothing, then run the call once when approved. */
  async function expectParks(graph: Parameters<typeof runInProcess>[0], input: unknown, script: unknown[]) {
    const llm = new MockLanguageModel({ generate: script as never });
    const waiting = await runInProcess(graph, input, { services: { languageModel: llm, tools: registry() } });
    expect(waiting.status).toBe('waiting');
    expect(waiting.interrupt).toMatchObject({
      request: { type: 'tool-approval', tool: 'wire', arguments: JSON.stringify({ amount: 999_999 }) },
    });
    expect(wired).toEqual([]);
    const done = await waiting.resume({ approved: true });
    expect(wired).toEqual([999_999]);
    expect(toolMessages(done)).toContain(JSON.stringify({ wired: 999_999 }));
    expect(validateHistory(done.messages)).toEqual([]);
    return done;
  }

  it('react-agent: a requiresApproval tool parks the run; approving runs it once', async () => {
    const done = await expectParks(reactAgentGraph, { query: 'wire it', tools: ['wire'] }, [wireCall, 'Wired.']);
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Wired.' } });
  });

  it('rag-agent: a requiresApproval extra tool parks the run; approving runs it once', async () => {
    const done = await expectParks(ragAgentGraph, ragInput(['wire']), [
      wireCall,
      { toolCalls: [{ name: 'final_answer', arguments: { answer: 'Wired.', citations: [] } }] },
    ]);
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Wired.' } });
  });

  it('rag-agent: a rejected call never runs; the model reads the rejection', async () => {
    const llm = new MockLanguageModel({
      generate: [
        wireCall,
        { toolCalls: [{ name: 'final_answer', arguments: { answer: 'Not wired.', citations: [] } }] },
      ],
    });
    const waiting = await runInProcess(ragAgentGraph, ragInput(['wire']), {
      services: { languageModel: llm, tools: registry() },
    });
    expect(waiting.status).toBe('waiting');
    const done = await waiting.resume({ approved: false, reason: 'too much' });
    expect(done.status).toBe('completed');
    expect(wired).toEqual([]);
    expect(toolMessages(done)[0]).toMatch(/^Error: a person rejected this tool call: too much\./);
  });

  it("multi-agent: the run's tools are offered to the lead beside its colleagues; a requiresApproval one parks the run", async () => {
    const experts = [
      { name: 'treasurer', description: 'Payments and wires' },
      { name: 'auditor', description: 'Checks payments' },
    ];
    const done = await expectParks(multiAgentGraph, { query: 'wire it', experts, recall: 'first', tools: ['wire'] }, [
      wireCall,
      'Wired.',
    ]);
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Wired.', consulted: [] } });
    const clash = await runInProcess(
      multiAgentGraph,
      { query: 'x', experts, tools: ['auditor'] },
      { services: { languageModel: new MockLanguageModel(), tools: registry() } },
    );
    expect(clash).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
  });

  it("reflect: the built-in writer may call the run's tools; a requiresApproval one parks the run", async () => {
    const approve = JSON.stringify({ approved: true, critique: '' });
    const done = await expectParks(reflectGraph, { task: 'wire it', tools: ['wire'] }, [wireCall, 'Wired.', approve]);
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Wired.', approved: true, iterations: 1 } });
  });

  it('a custom graph through the exported helpers: a requiresApproval tool parks the run', async () => {
    const done = await expectParks(customGraph, { query: 'wire it' }, [wireCall]);
    expect(done.status).toBe('completed');
  });

  it("a tool's own beforeToolCall runs under every graph: react-agent, rag-agent, multi-agent, reflect and a custom graph", async () => {
    const call = { toolCalls: [{ name: 'guarded_transfer', arguments: { to: 'mallory', amount: 1_000_000 } }] };
    const runs = [
      { graph: reactAgentGraph, input: { query: 'send', tools: ['guarded_transfer'] }, script: [call, 'Done.'] },
      // A graph with its own (permissive) hook: the tool's hook still runs after it.
      {
        graph: createReactAgentGraph({ name: 'lenient', beforeToolCall: () => ({ action: 'run' }) }),
        input: { query: 'send', tools: ['guarded_transfer'] },
        script: [call, 'Done.'],
      },
      {
        graph: ragAgentGraph,
        input: ragInput(['guarded_transfer']),
        script: [call, { toolCalls: [{ name: 'final_answer', arguments: { answer: 'Done.', citations: [] } }] }],
      },
      {
        graph: multiAgentGraph,
        input: { query: 'send', experts: [{ name: 'payer', description: 'Pays' }], tools: ['guarded_transfer'] },
        script: [call, 'Done.'],
      },
      {
        graph: reflectGraph,
        input: { task: 'send', tools: ['guarded_transfer'] },
        script: [call, 'Done.', JSON.stringify({ approved: true, critique: '' })],
      },
      { graph: customGraph, input: { query: 'send', tools: ['guarded_transfer'] }, script: [call] },
    ];
    for (const { graph, input, script } of runs) {
      const llm = new MockLanguageModel({ generate: script as never });
      const done = await runInProcess(graph, input, { services: { languageModel: llm, tools: registry() } });
      expect(done.status, graph.name).toBe('completed');
      // (rag-agent's final_answer adds its own tool message after it.)
      expect(toolMessages(done)[0], graph.name).toBe('Transfers over 100 need a person; tell the user.');
    }
    expect(transfers).toEqual([]);
  });

  it("tools: [] offers nothing, not even the graph's tool provider's tools", async () => {
    const llm = new MockLanguageModel({ generate: ['No tools.', 'Still none.'] });
    const withProvider = createReactAgentGraph({ name: 'provided', toolProvider: () => [guardedTransfer] });
    const services = { languageModel: llm, tools: new ToolRegistry([...builtInTools()]) };
    const done = await runInProcess(withProvider, { query: 'hi', tools: [] }, { services });
    expect(done.status).toBe('completed');
    expect(llm.calls[0]!.tools).toBeUndefined();
    // Omitted keeps its meaning: the registry's tools and the provider's.
    const omitted = await runInProcess(withProvider, { query: 'hi' }, { services });
    expect(omitted.status).toBe('completed');
    expect(llm.calls[1]!.tools?.map((tool) => tool.name)).toEqual(['calculator', 'current_time', 'guarded_transfer']);
  });

  it("the operator's allowTool: a disallowed tool is neither offered nor run, and naming it fails the run", async () => {
    const allowTool = (tenant: string, tool: string) => !(tenant === 'acme' && tool === 'transfer');
    const llm = new MockLanguageModel({
      generate: [{ toolCalls: [{ name: 'transfer', arguments: { to: 'x', amount: 5 } }] }, 'Could not.'],
    });
    const services = { languageModel: llm, tools: registry(), allowTool };
    const offered = await runInProcess(reactAgentGraph, { query: 'send' }, { services, tenant: 'acme' });
    expect(offered.status).toBe('completed');
    expect(llm.calls[0]!.tools?.map((tool) => tool.name)).not.toContain('transfer');
    expect(llm.calls[0]!.tools?.map((tool) => tool.name)).toContain('calculator');
    expect(transfers).toEqual([]);
    expect(toolMessages(offered)[0]).toMatch(/not allowed/);

    const named = await runInProcess(
      reactAgentGraph,
      { query: 'send', tools: ['transfer'] },
      { services, tenant: 'acme' },
    );
    expect(named).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(named.error?.message).toMatch(/'transfer' is not allowed/);
    const rag = await runInProcess(
      ragAgentGraph,
      { query: 'send', collection: 'c', tools: ['transfer'] },
      { services, tenant: 'acme' },
    );
    expect(rag).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    // Another tenant keeps the tool.
    const other = await runInProcess(
      reactAgentGraph,
      { query: 'send', tools: ['transfer'] },
      { services: { ...services, languageModel: new MockLanguageModel({ generate: ['ok'] }) }, tenant: 'globex' },
    );
    expect(other.status).toBe('completed');
  });
});
