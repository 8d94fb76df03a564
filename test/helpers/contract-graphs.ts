import { AgentqError } from '../../shared/contracts/errors.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START, Send, type AnyGraph } from '../../shared/graph/graph.js';

/**
 * Graphs run both in process (agentq/testing) and by a worker on Redis, whose step logs the contract
 * test compares: a chain, a router, a Send fan-out, a subgraph, an interrupt, a node that fails once.
 */
export function contractGraphs({
  onNode,
}: {
  /** Told each time a node of the interrupt graph runs (a resume runs its step again). @default none */
  onNode?: (runId: string, node: string) => void;
} = {}): AnyGraph[] {
  const chain = defineGraph({
    name: 'contract-chain',
    state: { log: channel.append<string>(), count: channel.custom<number, number>((a, b) => a + b, 0) },
    output: (state) => state,
  })
    .node('a', () => ({ log: 'a', count: 1 }))
    .node('b', () => ({ log: 'b', count: 2, messages: [{ role: 'assistant' as const, content: 'from b' }] }))
    .node('c', () => ({ log: 'c', count: 3 }))
    .edge(START, 'a')
    .edge('a', 'b')
    .edge('b', 'c')
    .edge('c', END)
    .build();

  const router = defineGraph({
    name: 'contract-router',
    input: undefined,
    state: { n: channel.replace(0), path: channel.append<string>() },
    initialState: (input: unknown) => ({ n: (input as { n: number }).n }),
    output: (state) => state.path,
  })
    .node('classify', (state) => ({ path: state.n > 10 ? 'big' : 'small' }))
    .node('big', () => ({ path: 'handled-big' }))
    .node('small', (state) => ({ n: state.n * 3, path: 'handled-small' }))
    .edge(START, 'classify')
    .route('classify', (state) => (state.n > 10 ? 'big' : 'small'), ['big', 'small'])
    .edge('big', END)
    .route('small', (state) => (state.n > 10 ? END : 'classify'), ['classify'])
    .build();

  const fanOut = defineGraph({
    name: 'contract-fan-out',
    input: undefined,
    state: { items: channel.replace<number[]>([]), squares: channel.append<number>(), done: channel.replace(false) },
    initialState: (input: unknown) => ({ items: (input as { items: number[] }).items }),
    output: (state) => state,
  })
    .node('plan', () => ({}))
    .node('square', (_state, context) => ({ squares: (context.arg as number) ** 2 }))
    .node('join', () => ({ done: true }))
    .edge(START, 'plan')
    .route('plan', (state) => state.items.map((item) => new Send('square', item)), ['square'])
    .edge('square', 'join')
    .edge('join', END)
    .build();

  const inner = defineGraph({ name: 'contract-inner', state: { log: channel.append<string>() } })
    .node('x', () => ({ log: 'x' }))
    .node('y', () => ({ log: 'y' }))
    .edge(START, 'x')
    .edge('x', 'y')
    .edge('y', END)
    .build();
  const subgraph = defineGraph({
    name: 'contract-subgraph',
    state: { log: channel.append<string>() },
    output: (state) => state.log,
  })
    .node('pre', () => ({ log: 'pre' }))
    .node('sub', inner)
    .node('post', () => ({ log: 'post' }))
    .edge(START, 'pre')
    .edge('pre', 'sub')
    .edge('sub', 'post')
    .edge('post', END)
    .build();

  const approval = defineGraph({
    name: 'contract-interrupt',
    state: { draft: channel.replace(''), verdict: channel.replace('') },
    output: (state) => state,
  })
    .node('write', () => ({ draft: 'pay 100 EUR' }))
    .node('ask', (state, context) => {
      onNode?.(context.runId, 'ask');
      const answer = context.interrupt<{ approved: boolean }>({ question: `approve "${state.draft}"?` });
      return { verdict: answer.approved ? 'approved' : 'rejected' };
    })
    .edge(START, 'write')
    .edge('write', 'ask')
    .edge('ask', END)
    .build();

  // Fails on its first attempt, then succeeds: the attempt number is the node's only memory of it.
  const flaky = defineGraph({ name: 'contract-retry', state: { tries: channel.replace(0) }, output: (s) => s })
    .node(
      'flaky',
      (_state, context) => {
        if (context.attempt === 1) throw new AgentqError('PROVIDER_ERROR', 'first attempt fails', { retryable: true });
        return { tries: context.attempt };
      },
      { retry: { maxAttempts: 3, initialDelayMs: 10, jitter: false } },
    )
    .edge(START, 'flaky')
    .edge('flaky', END)
    .build();

  return [chain, router, fanOut, subgraph, approval, flaky];
}
