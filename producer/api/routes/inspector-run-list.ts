import { z } from 'zod';
import { encodeCursor } from '../../../shared/store/run-meta.js';
import { RUN_STATUSES, type RunRecord } from '../../../shared/contracts/run-record.js';
import { ERROR_CODES } from '../../../shared/contracts/errors.js';
import type { ApiContext } from '../api-context.js';
import { ApiError } from '../errors.js';
import { runsListPage } from '../inspector/runs-list-page.js';
import type { InspectorHelpers, PageScope } from './inspector-helpers.js';

/** Tenants an admin's "all tenants" list reads at most. */
const ALL_TENANTS_MAX = 50;

export const runListQuery = z.object({
  status: z.enum(RUN_STATUSES).or(z.literal('')).optional(),
  graph: z.string().max(128).optional(),
  error: z.enum(ERROR_CODES).or(z.literal('')).optional(),
  tenant: z.string().max(128).optional(),
  cursor: z.string().max(512).optional(),
});

/**
 * Every tenant's runs as one list, newest first, paged: each tenant's list from the same cursor (its
 * runs older than the last one shown, ties by id as store.list orders them), merged, cut at `limit`.
 */
async function listAll(
  context: ApiContext,
  filter: { status?: RunRecord['status']; graph?: string; errorCode?: string },
  limit: number,
  cursor?: string,
) {
  const { store } = context;
  const tenants = (await context.redis.smembers(store.keys.tenants())).sort().slice(0, ALL_TENANTS_MAX);
  const pages = await Promise.all(
    tenants.map((tenant) => store.reads.list(tenant, { ...filter, limit, ...(cursor ? { cursor } : {}) })),
  );
  const newestFirst = (left: RunRecord, right: RunRecord) =>
    Date.parse(right.createdAt) - Date.parse(left.createdAt) || (right.id < left.id ? -1 : right.id > left.id ? 1 : 0);
  const merged = pages.flatMap((one) => one.runs).sort(newestFirst);
  const runs = merged.slice(0, limit);
  const more = merged.length > limit || pages.some((one) => one.nextCursor !== null);
  const last = runs.at(-1);
  return {
    runs,
    tenants,
    nextCursor: more && last ? encodeCursor(String(Date.parse(last.createdAt)), last.id) : null,
  };
}

/** The runs list at /runs: a tenant's own runs; an admin's of one tenant or of all of them. */
export function registerRunListPage(pages: PageScope, helpers: InspectorHelpers): void {
  const { context, caller, html, signOutOf } = helpers;
  const { store } = context;
  pages.get('/runs', { schema: { hide: true, querystring: runListQuery } }, async (request, reply) => {
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
        const all = await listAll(context, filter, 50, cursor);
        result = { runs: all.runs, nextCursor: all.nextCursor };
        tenants = all.tenants;
      } else {
        result = await store.reads.list(tenant ?? principal.tenant, {
          ...filter,
          limit: 50,
          ...(cursor ? { cursor } : {}),
        });
        if (admin) tenants = (await context.redis.smembers(store.keys.tenants())).sort().slice(0, ALL_TENANTS_MAX);
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
}
