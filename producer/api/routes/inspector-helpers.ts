import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RunMeta } from '../../../shared/store/redis-run-store.js';
import { tenantRunId } from '../../../shared/contracts/ids.js';
import type { ApiContext } from '../api-context.js';
import type { Principal } from '../auth/api-keys.js';
import { csrfToken } from '../auth/csrf.js';
import { messagePage } from '../inspector/message-page.js';

/** The inspector's guarded scope, with zod schemas. */
export type PageScope = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  ZodTypeProvider
>;

export const pageIdParams = z.object({ id: z.string().min(1).max(256) });

export function notFoundPage(reply: FastifyReply, what: string): FastifyReply {
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

/** What every inspector page needs: the caller, what it may see, and how a page or a form answers. */
export interface InspectorHelpers {
  context: ApiContext;
  caller(request: FastifyRequest): Principal;
  visible(request: FastifyRequest, tenant: string): boolean;
  ownRun(request: FastifyRequest, runId: string): Promise<RunMeta | null>;
  html(reply: FastifyReply, body: string, status?: number): FastifyReply;
  back(request: FastifyRequest, reply: FastifyReply, runId: string, notice: string): Promise<FastifyReply>;
  signOutOf(request: FastifyRequest): { action: string; csrf: string } | null;
  notFoundPage(reply: FastifyReply, what: string): FastifyReply;
}

export function inspectorHelpers(context: ApiContext): InspectorHelpers {
  const { sessions, store } = context;
  const caller = (request: FastifyRequest): Principal => request.principal!;
  const visible = (request: FastifyRequest, tenant: string) =>
    caller(request).role === 'admin' || caller(request).tenant === tenant;
  return {
    context,
    caller,
    visible,
    ownRun: async (request, runId) => {
      // A tenant's own client-chosen name resolves as on /v1/runs (tenantRunId).
      const meta = await store.reads.get(tenantRunId(caller(request).tenant, runId));
      return meta && visible(request, meta.tenant) ? meta : null;
    },
    html: (reply, body, status = 200) =>
      reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body),
    /** Back to the run page; the notice travels in the session (a flash), never in the URL. */
    back: async (request, reply, runId, notice) => {
      if (request.pageSession) await sessions.flash(request.pageSession, runId, notice);
      return reply.redirect(`/runs/${encodeURIComponent(runId)}`, 303);
    },
    signOutOf: (request) =>
      request.pageSession ? { action: '/runs/logout', csrf: csrfToken(request.pageSession) } : null,
    notFoundPage,
  };
}
