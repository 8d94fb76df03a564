import type { FastifyRequest } from 'fastify';
import { tenantRunId } from '../../../shared/contracts/ids.js';
import type { RedisRunStore, RunMeta } from '../../../shared/store/redis-run-store.js';
import { principalOf } from '../auth/principal-of.js';
import { ApiError } from '../errors.js';

/** Missing and foreign runs answer alike, so a tenant cannot learn which ids other tenants use. */
function notFound(runId: string): ApiError {
  return new ApiError(
    404,
    'NOT_FOUND',
    `run ${runId} not found (it may never have existed, or it expired or was purged)`,
  );
}

/** The run's meta if it belongs to the caller's tenant; 404 otherwise (the client's reads are not tenant-scoped). */
export function ownRunOf(store: RedisRunStore) {
  return async (request: FastifyRequest, runId: string): Promise<RunMeta> => {
    const { tenant } = principalOf(request);
    const meta = await store.reads.get(tenantRunId(tenant, runId));
    if (!meta || meta.tenant !== tenant) throw notFound(runId);
    return meta;
  };
}
