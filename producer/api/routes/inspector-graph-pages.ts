import { ServedGraphs } from '../../../shared/store/served-graphs.js';
import { graphsPage, type GraphRow } from '../inspector/graphs-page.js';
import type { InspectorHelpers, PageScope } from './inspector-helpers.js';

/** `/graphs` (admin role, as the rollout routes): every graph live workers serve or a rollout names. */
export function registerGraphPages(pages: PageScope, helpers: InspectorHelpers): void {
  const { context, caller, html, signOutOf, notFoundPage } = helpers;
  const served = new ServedGraphs({
    redis: context.redis,
    keys: context.store.keys,
    heartbeatMs: context.config.graphHeartbeatMs,
  });
  pages.get('/graphs', { schema: { hide: true } }, async (request, reply) => {
    if (caller(request).role !== 'admin') return notFoundPage(reply, 'graphs');
    const [{ ids }, rollouts] = await Promise.all([served.live(), context.client.rollouts.list()]);
    const versions = new Map<string, string[]>();
    for (const id of ids) {
      const at = id.lastIndexOf('@');
      const graph = id.slice(0, at);
      versions.set(graph, [...(versions.get(graph) ?? []), id.slice(at + 1)]);
    }
    const names = new Set([...versions.keys(), ...rollouts.map((rollout) => rollout.graph)]);
    const rows: GraphRow[] = [...names].sort().map((graph) => ({
      graph,
      served: versions.get(graph) ?? [],
      rollout: rollouts.find((rollout) => rollout.graph === graph),
    }));
    return html(reply, graphsPage(rows, { signOut: signOutOf(request) }));
  });
}
