import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod, ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatBatchResultsCsv, formatBatchResultsJsonl } from '../../cli/format-batch-results.js';
import type { RunMeta } from '../../../shared/store/redis-run-store.js';
import { toRunRecord } from '../../../shared/store/redis-run-store.js';
import { encodeCursor } from '../../../shared/store/run-meta.js';
import { RUN_STATUSES, type RunRecord, isTerminal } from '../../../shared/contracts/run-record.js';
import { ERROR_CODES } from '../../../shared/contracts/errors.js';
import { tenantRunId } from '../../../shared/contracts/ids.js';
import type { ApiContext } from '../api-context.js';
import type { Principal } from '../auth/api-keys.js';
import { csrfRefusal, csrfToken, requireSameOrigin } from '../auth/csrf.js';
import { INSPECTOR_COOKIE } from '../auth/dashboard-sessions.js';
import { requirePageCaller } from '../auth/page-caller.js';
import { ApiError, sendApiError } from '../errors.js';
import { batchPage } from '../inspector/batch-page.js';
import { messagePage } from '../inspector/message-page.js';
import { PAGE_ASSETS, PAGE_STYLE, RUN_LIVE_SCRIPT } from '../inspector/page-assets.js';
import { pathOf, runPage } from '../inspector/run-page.js';
import { runsListPage } from '../inspector/runs-list-page.js';
import { registerTimeTravelForms } from './time-travel-forms.js';
import { limitRate } from '../limits/limit-rate.js';
import { streamRunEvents } from '../sse.js';
/** Recent runs of the same graph whose paths the diagram adds to this run's. */
const DIAGRAM_RUNS = 10;
/** Tenants an admin's "all tenants" list reads at most. */
const ALL_TENANTS_MAX = 50;

const idParams = z.object({ id: z.string().min(1).max(256) });
const listQuery = z.object({
  status: z.enum(RUN_STATUSES).or(z.literal('')).optional(),
  graph: z.string().max(128).optional(),
  error: z.enum(ERROR_CODES).or(z.literal('')).optional(),
  tenant: z.string().max(128).optional(),
  cursor: z.string().max(512).optional(),
});

function notFoundPage(reply: FastifyReply, what: string): FastifyReply {
  return reply
    .code(404)
    .type('text/html; charset=utf-8')
    .send(
      messagePage({
        title: 'Not found',
        text: `${what} not found (it may never have existed, belong to another tenant, or have expired).`,
      }),
    );
}

/**
 * The run inspector: server-rendered pages at /runs, /runs/:id and /batches/:id, with the
 * API's own script for live updates. A caller is its Bearer key or the session from /runs/login or
 * /admin/login (sign-in-routes.ts); a tenant sees its own runs, an admin every tenant's; a foreign run
 * is a 404 like a missing one. The pages count against the caller's rate limit like /v1; a form that
 * changes a run must come from this API's origin and, from a session, carry the session's CSRF token.
 */
export function inspectorRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { apiKeys, config, sessions, store, client, inflight } = context;
  const auth = { apiKeys, sessions, authThrottle: context.authThrottle, defaultTenant: config.tenant };

  const guard = requirePageCaller(auth, {
    cookie: INSPECTOR_COOKIE,
    sendsToSignIn: (request) => request.method === 'GET' && !request.url.includes('/events'),
    hint: 'sign in at /runs/login, or send "Authorization: Bearer <API key>"',
  });

  /** preHandler of the forms (the body is parsed by then): a session's post carries its CSRF token. */
  const checkCsrf = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const refused = request.pageSession ? csrfRefusal(request.pageSession, request.body) : null;
    return refused ? sendApiError(reply, refused) : undefined;
  };
  const signOutOf = (request: FastifyRequest) =>
    request.pageSession ? { action: '/runs/logout', csrf: csrfToken(request.pageSession) } : null;

  const caller = (request: FastifyRequest): Principal => request.principal!;
  const visible = (request: FastifyRequest, tenant: string) =>
    caller(request).role === 'admin' || caller(request).tenant === tenant;
  const ownRun = async (request: FastifyRequest, runId: string): Promise<RunMeta | null> => {
    // A tenant's own client-chosen name resolves as on /v1/runs (tenantRunId).
    const meta = await store.reads.get(tenantRunId(caller(request).tenant, runId));
    return meta && visible(request, meta.tenant) ? meta : null;
  };
  const html = (reply: FastifyReply, body: string, status = 200) =>
    reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
  /** Back to the run page; the notice travels in the session (a flash), never in the URL. */
  const back = async (request: FastifyRequest, reply: FastifyReply, runId: string, notice: string) => {
    if (request.pageSession) await sessions.flash(request.pageSession, runId, notice);
    return reply.redirect(`/runs/${encodeURIComponent(runId)}`, 303);
  };

  /** Paths of recent runs of the same graph and tenant, for the diagram. */
  const otherPaths = async (meta: RunMeta) => {
    const { runs } = await store.reads.list(meta.tenant, { graph: meta.graph, limit: DIAGRAM_RUNS });
    const others = runs.filter((run) => run.id !== meta.id);
    return Promise.all(others.map(async (run) => pathOf(await store.reads.steps(run.id))));
  };

  /**
   * Every tenant's runs as one list, newest first, paged: each tenant's list from the same cursor (its
   * runs older than the last one shown, ties by id as store.list orders them), merged, cut at `limit`.
   */
  const listAll = async (
    filter: { status?: RunRecord['status']; graph?: string; errorCode?: string },
    limit: number,
    cursor?: string,
  ) => {
    const tenants = (await context.redis.smembers(store.keys.tenants())).sort().slice(0, ALL_TENANTS_MAX);
    const pages = await Promise.all(
      tenants.map((tenant) => store.reads.list(tenant, { ...filter, limit, ...(cursor ? { cursor } : {}) })),
    );
    const newestFirst = (left: RunRecord, right: RunRecord) =>
      Date.parse(right.createdAt) - Date.parse(left.createdAt) ||
      (right.id < left.id ? -1 : right.id > left.id ? 1 : 0);
    const merged = pages.flatMap((one) => one.runs).sort(newestFirst);
    const runs = merged.slice(0, limit);
    const more = merged.length > limit || pages.some((one) => one.nextCursor !== null);
    const last = runs.at(-1);
    return {
      runs,
      tenants,
      nextCursor: more && last ? encodeCursor(String(Date.parse(last.createdAt)), last.id) : null,
    };
  };

  return async (app) => {
    await app.register(async (plain) => {
      const scope = plain.withTypeProvider<ZodTypeProvider>();
      scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)));
      });
      // The pages' stylesheet and script: public (no secrets), so the sign-in page has its style too.
      for (const [asset, text] of [
        [PAGE_ASSETS.style, PAGE_STYLE],
        [PAGE_ASSETS.runLive, RUN_LIVE_SCRIPT],
      ] as const) {
        scope.get(asset.path, { schema: { hide: true } }, async (_request, reply) =>
          reply.type(asset.type).header('cache-control', 'public, max-age=300').send(text),
        );
      }

      await scope.register(async (guarded) => {
        const pages = guarded.withTypeProvider<ZodTypeProvider>();
        pages.addHook('onRequest', requireSameOrigin);
        pages.addHook('onRequest', guard);
        pages.addHook('onRequest', limitRate(context.rateLimiter, context.redis));
        pages.addHook('preHandler', async (request, reply) =>
          request.method === 'POST' ? checkCsrf(request, reply) : undefined,
        );

        pages.get('/runs', { schema: { hide: true, querystring: listQuery } }, async (request, reply) => {
          const principal = caller(request);
          const { status, graph, error, cursor } = request.query;
          const filter = {
            ...(status ? { status } : {}),
            ...(graph ? { graph } : {}),
            ...(error ? { errorCode: error } : {}),
          };
          const admin = principal.role === 'admin';
          const tenant = admin ? request.query.tenant || undefined : principal.tenant;
          let result: { runs: RunRecord[]; nextCursor: string | null };
          let tenants: string[] | null = null;
          try {
            if (admin && tenant === undefined) {
              const all = await listAll(filter, 50, cursor);
              result = { runs: all.runs, nextCursor: all.nextCursor };
              tenants = all.tenants;
            } else {
              result = await store.reads.list(tenant ?? principal.tenant, {
                ...filter,
                limit: 50,
                ...(cursor ? { cursor } : {}),
              });
              if (admin)
                tenants = (await context.redis.smembers(store.keys.tenants())).sort().slice(0, ALL_TENANTS_MAX);
            }
          } catch (error) {
            if (cursor !== undefined && error instanceof Error && error.name === 'ReplyError')
              throw new ApiError(400, 'INVALID_INPUT', `cursor '${cursor}' is not one this page made`);
            throw error;
          }
          return html(
            reply,
            runsListPage({
              ...result,
              filter: { ...filter, ...(tenant ? { tenant } : {}) },
              tenants,
              now: Date.now(),
              signOut: signOutOf(request),
            }),
          );
        });

        pages.get(
          '/runs/:id',
          { schema: { hide: true, params: idParams, querystring: listQuery } },
          async (request, reply) => {
            const meta = await ownRun(request, request.params.id);
            if (!meta) return notFoundPage(reply, `run ${request.params.id}`);
            const [steps, events, messages, state, others, replayReport] = await Promise.all([
              store.reads.steps(meta.id),
              store.eventLog.events(meta.id, { count: 10_000 }),
              store.reads.messages(meta.id),
              store.reads.state(meta.id),
              otherPaths(meta),
              // A replay's verdict; none when its original is gone.
              meta.replay ? client.replayReport(meta.id).catch(() => null) : null,
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
            const after =
              typeof lastEventId === 'string' && /^\d{1,16}-\d{1,16}$/.test(lastEventId)
                ? lastEventId
                : (request.query.after ?? '0-0');
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

        pages.post('/runs/:id/cancel', { schema: { hide: true, params: idParams } }, async (request, reply) => {
          const meta = await ownRun(request, request.params.id);
          if (!meta) return notFoundPage(reply, `run ${request.params.id}`);
          const record = isTerminal(meta.status) ? toRunRecord(meta) : await client.cancel(meta.id);
          return back(request, reply, meta.id, `cancel: the run is ${record.status}`);
        });

        pages.post('/runs/:id/retry', { schema: { hide: true, params: idParams } }, async (request, reply) => {
          const meta = await ownRun(request, request.params.id);
          if (!meta) return notFoundPage(reply, `run ${request.params.id}`);
          if (meta.status !== 'failed')
            return back(request, reply, meta.id, `retry: the run is ${meta.status}; only a failed run can be retried`);
          if (!(await inflight.reserve(meta.tenant, meta.id)))
            return back(
              request,
              reply,
              meta.id,
              `retry: tenant ${meta.tenant} has ${inflight.max} runs in flight (AGENTQ_TENANT_MAX_INFLIGHT)`,
            );
          try {
            await client.retry(meta.id);
          } catch (error) {
            await inflight.release(meta.tenant, meta.id).catch(() => undefined);
            throw error;
          }
          return back(request, reply, meta.id, 'retry: the run continues from its last commit');
        });

        registerTimeTravelForms(pages, { client, ownRun, back, notFoundPage });

        pages.post(
          '/runs/:id/resume',
          { schema: { hide: true, params: idParams, body: z.object({ value: z.string().max(100_000) }).loose() } },
          async (request, reply) => {
            const meta = await ownRun(request, request.params.id);
            if (!meta) return notFoundPage(reply, `run ${request.params.id}`);
            let value: unknown = request.body.value;
            try {
              value = JSON.parse(request.body.value);
            } catch {
              // Plain text is an answer too.
            }
            if (meta.status !== 'waiting')
              return back(request, reply, meta.id, `resume: the run is ${meta.status}, not waiting`);
            await client.resume(meta.id, value);
            return back(request, reply, meta.id, 'resume: the answer was sent');
          },
        );

        const ownBatch = async (request: FastifyRequest, batchId: string) => {
          const batch = await client.batches.get(batchId);
          return batch && visible(request, batch.tenant) ? batch : null;
        };
        pages.get('/batches/:id', { schema: { hide: true, params: idParams } }, async (request, reply) => {
          const batch = await ownBatch(request, request.params.id);
          if (!batch) return notFoundPage(reply, `batch ${request.params.id}`);
          const results = (await client.batches.results(batch.id)) ?? [];
          return html(reply, batchPage(batch, results, { signOut: signOutOf(request) }));
        });
        pages.get(
          '/batches/:id/results.:format',
          {
            schema: {
              hide: true,
              params: z.object({ id: z.string().min(1).max(256), format: z.enum(['csv', 'jsonl']) }),
            },
          },
          async (request, reply) => {
            const batch = await ownBatch(request, request.params.id);
            if (!batch) return notFoundPage(reply, `batch ${request.params.id}`);
            const results = (await client.batches.results(batch.id)) ?? [];
            reply.header('content-disposition', `attachment; filename="${batch.id}.${request.params.format}"`);
            return request.params.format === 'csv'
              ? reply.type('text/csv; charset=utf-8').send(formatBatchResultsCsv(results))
              : reply.type('application/x-ndjson; charset=utf-8').send(formatBatchResultsJsonl(results));
          },
        );
      });
    });
  };
}
