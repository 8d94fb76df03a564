import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ID_PATTERN } from '../../../shared/contracts/ids.js';
import { RUN_STATUSES } from '../../../shared/contracts/run-record.js';
import { Conversations, type ConversationRecord } from '../../../shared/store/conversations.js';
import type { ApiContext } from '../api-context.js';
import { principalOf } from '../auth/principal-of.js';
import { ApiError, errorBodySchema } from '../errors.js';
import { messageSchema } from '../schemas/run-schemas.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

const paramsSchema = z.object({
  id: z.string().regex(ID_PATTERN, "the conversation id must be 1-128 characters of letters, digits, '_', '.' or '-'"),
});

const conversationSchema: z.ZodType<ConversationRecord> = z
  .object({
    id: z.string(),
    tenant: z.string(),
    turns: z
      .array(z.object({ runId: z.string(), status: z.enum(RUN_STATUSES), createdAt: z.string() }).loose())
      .describe('its turns (runs), oldest first; the newest 100'),
    activeRunIds: z.array(z.string()).describe('turns not yet finished, first first: the first runs, the others wait'),
    latestCompletedRunId: z.string().nullable().describe('the run the next turn continues'),
    messages: z.array(messageSchema).describe("that run's history: what the next turn starts from"),
  })
  .loose()
  .describe('Conversation');

/** Missing and foreign conversations answer alike: a tenant cannot learn which ids other tenants use. */
function notFound(conversationId: string): ApiError {
  return new ApiError(
    404,
    'NOT_FOUND',
    `conversation ${conversationId} not found (it never had a turn, or it was cleared or expired)`,
  );
}

/** `GET` and `DELETE /v1/conversations/:id`: read and clear a conversation, in the caller's tenant. */
export function conversationsRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const conversations = new Conversations(context.store);
  return async (app) => {
    app.get('/v1/conversations/:id', {
      schema: {
        operationId: 'getConversation',
        summary: 'A conversation: its turns and what it remembers',
        description:
          "The runs enqueued with this conversationId in your tenant, their statuses, the turns not yet finished, and the history of the latest completed turn (what the next turn starts from). Another tenant's conversation with the same id answers 404, as a missing one.",
        tags: ['conversations'],
        params: paramsSchema,
        response: { 200: conversationSchema, ...errors },
      },
      handler: async (request) => {
        const record = await conversations.get(principalOf(request).tenant, request.params.id);
        if (!record) throw notFound(request.params.id);
        return record;
      },
    });

    app.delete('/v1/conversations/:id', {
      schema: {
        operationId: 'clearConversation',
        summary: 'Clear a conversation',
        description:
          'Forgets what the conversation remembers: its next turn starts from an empty history. Its runs are kept (until their retention ends; purge them with DELETE /v1/runs/:id?purge=true) and unfinished turns go on, one at a time. 404 when your tenant has no conversation with this id.',
        tags: ['conversations'],
        params: paramsSchema,
        response: { 204: z.null().describe('cleared'), ...errors },
      },
      handler: async (request, reply) => {
        if (!(await conversations.clear(principalOf(request).tenant, request.params.id)))
          throw notFound(request.params.id);
        return reply.code(204).send(null);
      },
    });
  };
}
