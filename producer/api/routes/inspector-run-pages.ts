import { z } from 'zod';
import { ChildLinks } from '../../../shared/store/child-links.js';
import type { RunMeta } from '../../../shared/store/redis-run-store.js';
import { toRunRecord } from '../../../shared/store/redis-run-store.js';
import { csrfToken } from '../auth/csrf.js';
import { ApiError } from '../errors.js';
import type { RunPageWindows } from '../inspector/list-window-nav.js';
import type { ChildrenWindow } from '../inspector/run-family.js';
import { pathOf, runPage } from '../inspector/run-page.js';
import { READ_BOUNDS } from '../read-bounds.js';
import { streamRunEvents } from '../sse.js';
import { parseStreamCursor } from '../../../shared/contracts/stream-cursor.js';
import { type InspectorHelpers, type PageScope, pageIdParams as idParams } from './inspector-helpers.js';
import { runListQuery } from './inspector-run-list.js';

/** Recent runs of the same graph whose paths the diagram adds to this run's. */
const DIAGRAM_RUNS = 10;

/** Child runs a run page lists at a time (a fan-out may have thousands: the rest are pages away). */
const PAGE_CHILDREN = 50;

/** A list position in the run page's URL: which window of its steps or transcript to show. */
const position = z
  .string()
  .regex(/^\d{1,10}$/, 'a position is a whole number')
  .optional();

/** The run page's query: the runs list's filters (kept for its links back) and the windows shown. */
const runPageQuery = runListQuery.extend({
  steps: position,
  messages: position,
  children: z
    .string()
    .regex(/^\d{1,20}$/, 'children must be the cursor a run page linked to')
    .optional(),
});

function windowsOf(query: { steps?: string; messages?: string }): RunPageWindows {
  return {
    ...(query.steps === undefined ? {} : { steps: Number(query.steps) }),
    ...(query.messages === undefined ? {} : { messages: Number(query.messages) }),
  };
}

/** A run's page at /runs/:id and the live events its script reads at /runs/:id/events. */
export function registerRunPages(pages: PageScope, helpers: InspectorHelpers): void {
  const { context, ownRun, html, notFoundPage } = helpers;
  const { store, client, config, sessions } = context;

  const links = new ChildLinks(store.redis, store.keys);

  /** One page of the run's children with each child's status; null for a run that started none. */
  const childrenOf = async (runId: string, cursor: string | undefined): Promise<ChildrenWindow | null> => {
    const page = await links.list(runId, { limit: PAGE_CHILDREN, ...(cursor === undefined ? {} : { cursor }) });
    if (page.total === 0) return null;
    const metas = await Promise.all(page.children.map((child) => store.reads.get(child.runId)));
    return {
      children: page.children.map((child, at) => ({ ...child, status: metas[at]?.status ?? null })),
      total: page.total,
      nextCursor: page.nextCursor,
    };
  };

  /** Paths of recent runs of the same graph and tenant, for the diagram. */
  const otherPaths = async (meta: RunMeta) => {
    const { runs } = await store.reads.list(meta.tenant, { graph: meta.graph, limit: DIAGRAM_RUNS });
    const others = runs.filter((run) => run.id !== meta.id);
    return Promise.all(
      others.map(async (run) =>
        pathOf((await store.reads.stepWindow(run.id, { limit: READ_BOUNDS.diagramSteps })).items),
      ),
    );
  };

  pages.get(
    '/runs/:id',
    { schema: { hide: true, params: idParams, querystring: runPageQuery } },
    async (request, reply) => {
      const meta = await ownRun(request, request.params.id);
      if (!meta) return notFoundPage(reply, `run ${request.params.id}`);
      const windows = windowsOf(request.query);
      // Windows of the run's lists, never the whole: what a view costs does not grow with the run.
      const [steps, events, messages, state, others, replayReport, children] = await Promise.all([
        store.reads.stepWindow(meta.id, { from: windows.steps, limit: READ_BOUNDS.pageSteps }),
        store.eventLog.latest(meta.id, READ_BOUNDS.pageEvents),
        store.reads.messageWindow(meta.id, { from: windows.messages, limit: READ_BOUNDS.pageMessages }),
        store.reads.state(meta.id),
        otherPaths(meta),
        // A replay's verdict; none when its original is gone.
        meta.replay ? client.replayReport(meta.id).catch(() => null) : null,
        childrenOf(meta.id, request.query.children),
      ]);
      const record = toRunRecord(meta);
      return html(
        reply,
        runPage({
          record,
          meta,
          steps,
          events,
          messages,
          windows,
          state,
          otherPaths: others,
          now: Date.now(),
          shards: config.shards,
          traceUrl: config.traceUrl,
          // The live script's refreshes (X-Agentq-Refresh) leave the notice to the page view it is for.
          notice:
            request.pageSession && request.headers['x-agentq-refresh'] === undefined
              ? await sessions.takeFlash(request.pageSession, meta.id)
              : null,
          csrf: request.pageSession ? csrfToken(request.pageSession) : null,
          replayReport,
          children,
        }),
      );
    },
  );

  pages.get(
    '/runs/:id/events',
    {
      schema: {
        hide: true,
        params: idParams,
        querystring: z.object({
          after: z
            .string()
            .regex(/^\d{1,16}-\d{1,16}$/, "after must be an event id (like '1700000000000-0')")
            .optional(),
        }),
      },
    },
    async (request, reply) => {
      const meta = await ownRun(request, request.params.id);
      if (!meta) throw new ApiError(404, 'NOT_FOUND', `run ${request.params.id} not found`);
      const lastEventId = request.headers['last-event-id'];
      const after = (typeof lastEventId === 'string' ? parseStreamCursor(lastEventId) : null) ?? {
        event: request.query.after ?? '0-0',
        token: null,
      };
      await streamRunEvents({
        request,
        reply,
        store,
        events: context.events,
        streams: context.streams,
        tenant: meta.tenant,
        runId: meta.id,
        after,
        tokens: context.tokens,
        signal: context.closing,
      });
    },
  );
}
