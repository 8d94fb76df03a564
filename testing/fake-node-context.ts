import pino from 'pino';
import type { NodeContext, Services } from '../shared/graph/node-context.js';
import type { Usage } from '../shared/contracts/run-record.js';

export interface FakeNodeContextOptions {
  /** Saved results, shared between contexts to play a retried or re-delivered step. @default a new Map */
  memo?: Map<string, unknown>;
  /** @default null (no budget) */
  tokenBudgetRemaining?: number | null;
  /** @default 1 */
  attempt?: number;
  /** @default a signal that never fires */
  abortSignal?: AbortSignal;
  /** @default undefined */
  arg?: unknown;
}

/**
 * A node context for unit tests of node helpers: an in-memory memo (values copied, as through Redis)
 * and recorded usage. Integration tests use the real step processor instead.
 */
export function fakeNodeContext(
  services: Services,
  {
    memo = new Map<string, unknown>(),
    tokenBudgetRemaining = null,
    attempt = 1,
    abortSignal = new AbortController().signal,
    arg,
  }: FakeNodeContextOptions = {},
) {
  const recorded: (Usage & { model?: string })[] = [];
  const events: { type: string; data: Record<string, unknown> }[] = [];
  const context: NodeContext = {
    runId: 'run-1',
    tenant: 'default',
    stepIndex: 0,
    task: 0,
    stepId: 's0.t0',
    node: 'model',
    attempt,
    arg,
    abortSignal,
    logger: pino({ level: 'silent' }),
    services,
    history: async () => [],
    interrupt: () => {
      throw new Error('fakeNodeContext: interrupt is not supported');
    },
    memo: async <T>(key: string, compute: () => Promise<T>) => {
      if (memo.has(key)) return structuredClone(memo.get(key)) as T;
      const value = await compute();
      memo.set(key, structuredClone(value));
      return value;
    },
    recordUsage: (usage) => recorded.push(usage),
    sleep: async () => {
      throw new Error('fakeNodeContext: sleep is not supported');
    },
    waitFor: async () => {
      throw new Error('fakeNodeContext: waitFor is not supported');
    },
    callback: async () => {
      throw new Error('fakeNodeContext: callback is not supported');
    },
    runGraph: () => {
      throw new Error('fakeNodeContext: runGraph is not supported');
    },
    runGraphs: () => {
      throw new Error('fakeNodeContext: runGraphs is not supported');
    },
    emit: async (type, data) => {
      events.push({ type, data });
    },
    tokenBudgetRemaining,
  };
  return { context, recorded, memo, events };
}
