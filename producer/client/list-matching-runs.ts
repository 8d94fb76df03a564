import { sleep } from '../../shared/contracts/abort.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import type { ListFilter } from '../../shared/store/redis-run-store.js';
import { redisFaultOf } from '../../shared/redis/redis-fault.js';

/** How a bulk operation lists the tenant's runs. */
export interface RunListing {
  list(filter: ListFilter & { tenant?: string }): Promise<{ runs: RunRecord[]; nextCursor: string | null }>;
  /** Between tries of a page whose listing met a Redis fault. @default 1000 */
  listRetryDelayMs?: number;
}

/** Tries of one page's listing: a Redis timeout is retried, a fault that outlasts them fails the call. */
const LIST_TRIES = 4;
/** Runs a page asks for. */
const PAGE = 200;

/**
 * Every run the listing gives for `filter`, page by page, up to `limit` of those `keep` accepts (what the
 * store cannot filter by). A page that met a Redis fault is listed again, never taken as the end of the
 * list: a bulk operation that stopped there would leave runs behind, unreported.
 */
export async function listMatchingRuns(
  deps: RunListing,
  filter: Omit<ListFilter, 'limit' | 'cursor'> & { tenant?: string },
  { limit, keep }: { limit: number; keep?: (run: RunRecord) => boolean },
): Promise<RunRecord[]> {
  const matches: RunRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await listPage(deps, {
      ...filter,
      // Runs the caller drops do not count: it asks for whole pages then.
      limit: keep ? PAGE : Math.min(PAGE, limit - matches.length),
      ...(cursor ? { cursor } : {}),
    });
    matches.push(...(keep ? page.runs.filter(keep) : page.runs));
    cursor = page.nextCursor ?? undefined;
  } while (cursor && matches.length < limit);
  return matches.slice(0, limit);
}

async function listPage(
  deps: RunListing,
  filter: ListFilter & { tenant?: string },
): Promise<{ runs: RunRecord[]; nextCursor: string | null }> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await deps.list(filter);
    } catch (error) {
      if (attempt >= LIST_TRIES || !redisFaultOf(error)) throw error;
      await sleep((deps.listRetryDelayMs ?? 1000) * attempt);
    }
  }
}
