import { parseSince } from '../../../shared/contracts/parse-since.js';
import type { ApiContext } from '../api-context.js';
import { principalOf } from '../auth/principal-of.js';
import { errorBodySchema } from '../errors.js';
import { cancelRunsBodySchema, cancelRunsSummarySchema } from '../schemas/bulk-cancel-schemas.js';
import type { RouteScope } from './route-scope.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

/** `POST /v1/runs/cancel`: the caller's runs cancelled by filter. */
export function registerRunBulkCancelRoute(app: RouteScope, { client }: ApiContext): void {
  app.post('/v1/runs/cancel', {
    schema: {
      operationId: 'cancelRuns',
      summary: 'Cancel runs in bulk',
      description:
        'Every run of the caller in one of the named statuses (`status`: queued, running, waiting; required) that matches `graph`, `error` (for runs in flight: the failure they were retried from), `concurrencyKey`, created `since` and `until`, is cancelled as DELETE /v1/runs/{id} cancels one, at `ratePerSecond`, at most `limit` of them; `dryRun` only counts and lists them. A run that finished since it was listed is skipped, not cancelled; when two such requests race, each run is counted by one of them only.',
      tags: ['runs'],
      body: cancelRunsBodySchema,
      response: { 200: cancelRunsSummarySchema, ...errors },
    },
    handler: async (request) => {
      const { tenant } = principalOf(request);
      const { status, error, since, until, graph, concurrencyKey, dryRun, ratePerSecond, limit } = request.body;
      return client.cancelRuns(
        {
          tenant,
          status,
          ...(error ? { errorCode: error } : {}),
          ...(since === undefined ? {} : { since: parseSince(since) }),
          ...(until === undefined ? {} : { until: parseSince(until, Date.now(), 'until') }),
          ...(graph ? { graph } : {}),
          ...(concurrencyKey ? { concurrencyKey } : {}),
        },
        { dryRun: dryRun ?? false, ratePerSecond: ratePerSecond ?? 100, limit: limit ?? 200 },
      );
    },
  });
}
