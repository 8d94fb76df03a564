import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ID_PATTERN } from '../../../shared/contracts/ids.js';
import type { ApiContext } from '../api-context.js';
import { errorBodySchema } from '../errors.js';
import { principalOf } from '../auth/principal-of.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

const clearAnswerCacheQuerySchema = z
  .object({
    /** The collection whose cached answers to clear; absent: every collection's. */
    collection: z
      .string()
      .regex(ID_PATTERN, "collection must be 1-128 characters of letters, digits, '_', '.' or '-'")
      .optional(),
  })
  .strict();

const clearAnswerCacheResultSchema = z
  .object({ cleared: z.enum(['collection', 'all']), collection: z.string().optional() })
  .describe('AnswerCacheCleared');

/** `DELETE /v1/answer-cache[?collection=…]`: clears the caller's answer cache (docs/guides/batch-qa.md#answer-cache). */
export function answerCacheRoutes(context: Pick<ApiContext, 'client'>): FastifyPluginAsyncZod {
  return async (app) => {
    app.delete('/v1/answer-cache', {
      schema: {
        operationId: 'clearAnswerCache',
        summary: "Clear the caller's answer cache",
        description:
          "Answers cached before (a batch's `answerCache`, a run's `answer_cache`) are never returned again: of `collection`, or of every collection without it. The caller's tenant only.",
        tags: ['batches'],
        querystring: clearAnswerCacheQuerySchema,
        response: { 200: clearAnswerCacheResultSchema, ...errors },
      },
      handler: async (request) => {
        const { collection } = request.query;
        await context.client.clearAnswerCache({
          tenant: principalOf(request).tenant,
          ...(collection === undefined ? {} : { collection }),
        });
        return collection === undefined ? { cleared: 'all' as const } : { cleared: 'collection' as const, collection };
      },
    });
  };
}
