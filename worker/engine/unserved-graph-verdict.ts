import { AgentqError } from '../../shared/contracts/errors.js';
import type { GraphRegistry } from '../../shared/graph/graph-registry.js';
import { servesIn, type ServedGraphs } from '../../shared/store/served-graphs.js';
import type { RunMeta } from '../../shared/store/redis-run-store.js';

/** What a worker does with a run whose graph it lacks: leave it (for `delayMs`), or fail it. */
type UnservedGraphVerdict = { kind: 'wait'; delayMs: number; reason: string } | { kind: 'fail'; error: AgentqError };

/** How long a run that another live worker can serve is left before it is offered again. */
const HANDOFF_DELAY_MS = 1000;
/** How often a run nobody serves yet is looked at again while it waits. */
const RECHECK_MS = 5000;

/**
 * A worker never fails a run for a graph it lacks while another live worker serves that graph: it leaves
 * the run for that worker. A run nobody serves waits up to `waitMs` from its creation for such a worker
 * (AGENTQ_UNSERVED_GRAPH_WAIT_MS), and then fails with UNKNOWN_GRAPH naming the graphs that are served.
 */
export async function unservedGraphVerdict({
  meta,
  registry,
  served,
  waitMs,
  now = Date.now(),
}: {
  meta: Pick<RunMeta, 'graph' | 'graphVersion' | 'createdAt'>;
  registry: GraphRegistry;
  served: ServedGraphs;
  waitMs: number;
  now?: number;
}): Promise<UnservedGraphVerdict> {
  const wanted = meta.graphVersion ? `${meta.graph}@${meta.graphVersion}` : meta.graph;
  // Redis's time, as workers announce at it (not this worker's `now`, which may run ahead or behind).
  const { ids } = await served.live();
  if (servesIn(ids, meta.graph, meta.graphVersion ?? undefined)) {
    return {
      kind: 'wait',
      delayMs: HANDOFF_DELAY_MS,
      reason: `this worker lacks graph ${wanted} (it has ${registry.ids().join(', ') || 'none'}); left for a live worker that serves it`,
    };
  }
  const waited = now - meta.createdAt;
  if (waited < waitMs) {
    return {
      kind: 'wait',
      delayMs: Math.min(RECHECK_MS, waitMs - waited),
      reason: `no live worker serves graph ${wanted} yet; the run waits up to ${waitMs} ms (AGENTQ_UNSERVED_GRAPH_WAIT_MS) for one`,
    };
  }
  const servedNames = ids.length > 0 ? ids.join(', ') : registry.ids().join(', ') || 'none';
  return {
    kind: 'fail',
    error: new AgentqError(
      'UNKNOWN_GRAPH',
      `unknown graph '${wanted}': no live worker served it within ${waitMs} ms (AGENTQ_UNSERVED_GRAPH_WAIT_MS); graphs served: ${servedNames}. Start a worker that registers it, or fix the graph name`,
      { details: { graph: meta.graph, served: ids } },
    ),
  };
}
