import { LIST_PAGE } from '../client/run-list-pages.js';

/**
 * What one request can make the API read and send of a run, whatever the run's size: the caps of the
 * steps and messages APIs and of the run page (docs/reference/http-api.md, "Bounded reads", lists them).
 * A long run's lists are read in windows (LRANGE, XREVRANGE with COUNT), never whole and then cut.
 */
export const READ_BOUNDS = {
  /** Items one page of `GET /v1/runs/:id/steps` or `/messages` holds at most: `limit`'s maximum and default (RunReader's pages too). */
  apiItems: LIST_PAGE.maxItems,
  /** Steps the run page shows at once: the latest, the earlier ones behind a link. */
  pageSteps: 50,
  /** Messages the run page's transcript shows at once: the latest, the earlier ones behind a link. */
  pageMessages: 50,
  /** Latest events the run page reads (its timeline, parked notice and step details come from them). */
  pageEvents: 500,
  /** Timeline rows the run page draws: the latest tasks of those events. */
  pageTimelineRows: 50,
  /** Latest steps read from each recent run of the graph for the page's diagram. */
  diagramSteps: 50,
  /** Characters of one message's text, one step's details or the state the page shows; the API has the rest. */
  pageTextChars: 4000,
  /** Characters of the run's current state the page shows. */
  pageStateChars: 20_000,
} as const;
