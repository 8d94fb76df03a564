import { AgentqError } from '../../shared/contracts/errors.js';
import type { Message, StepRecord } from '../../shared/contracts/run-record.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { ListWindow } from '../../shared/store/run-reads.js';

/** Items one page holds at most (and by default), and the bytes of stored JSON after which it stops (whole items, at least one). */
export const LIST_PAGE = { maxItems: 1000, maxBytes: 4 * 1024 * 1024 } as const;

export interface ListPageRequest {
  /** The `nextCursor` of the page before; none: the first page. */
  cursor?: string;
  /** @default LIST_PAGE.maxItems (also the most allowed) */
  limit?: number;
}

/** A page of a run's list: `nextCursor` (null on the last page) leads to the next, `total` is the list's length. */
export type ListPage<K extends string, T> = { [key in K]: T[] } & { nextCursor: string | null; total: number };

/** One page of a run's steps, in commit order: what `GET /v1/runs/:id/steps` answers. */
export async function readStepPage(
  store: RedisRunStore,
  runId: string,
  request: ListPageRequest = {},
): Promise<ListPage<'steps', StepRecord>> {
  const window = await store.reads.stepWindow(runId, windowOf(request));
  return { steps: window.items, ...pageFields(window) };
}

/** One page of a run's history, oldest first: what `GET /v1/runs/:id/messages` answers. */
export async function readMessagePage(
  store: RedisRunStore,
  runId: string,
  request: ListPageRequest = {},
): Promise<ListPage<'messages', Message>> {
  const window = await store.reads.messageWindow(runId, windowOf(request));
  return { messages: window.items, ...pageFields(window) };
}

function windowOf({ cursor, limit = LIST_PAGE.maxItems }: ListPageRequest) {
  if (cursor !== undefined && !/^\d{1,10}$/.test(cursor))
    throw new AgentqError('INVALID_INPUT', `cursor '${cursor}' is not a nextCursor of a page of steps or messages`);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_PAGE.maxItems)
    throw new AgentqError(
      'INVALID_INPUT',
      `limit must be a whole number from 1 to ${LIST_PAGE.maxItems}, not ${limit}`,
    );
  return { from: Number(cursor ?? 0), limit, maxBytes: LIST_PAGE.maxBytes };
}

function pageFields(window: ListWindow<unknown>): { nextCursor: string | null; total: number } {
  return { nextCursor: window.next === null ? null : String(window.next), total: window.total };
}
