import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { formatBatchResultsCsv, formatBatchResultsJsonl } from '../../cli/format-batch-results.js';
import { batchPage } from '../inspector/batch-page.js';
import { type InspectorHelpers, type PageScope, pageIdParams as idParams } from './inspector-helpers.js';

/** A batch's page at /batches/:id and its results as a download (CSV or JSON lines). */
export function registerBatchPages(pages: PageScope, helpers: InspectorHelpers): void {
  const { context, visible, html, signOutOf, notFoundPage } = helpers;
  const { client } = context;
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
}
