import { toRunRecord } from '../../../shared/store/redis-run-store.js';
import { READ_BOUNDS } from '../read-bounds.js';
import { withPartialOutput } from '../../client/partial-output.js';
import { readMessagePage, readStepPage } from '../../client/run-list-pages.js';
import type { ApiContext } from '../api-context.js';
import { errorBodySchema } from '../errors.js';
import { ChildLinks } from '../../../shared/store/child-links.js';
import {
  childrenQuerySchema,
  childrenSchema,
  eventsHeadersSchema,
  eventsQuerySchema,
  listWindowQuerySchema,
  messagesSchema,
  runIdParamsSchema,
  runRecordSchema,
  runResultSchema,
  stepsSchema,
} from '../schemas/run-schemas.js';
import { readRunResult } from '../../../shared/store/read-run-result.js';
import { streamRunEvents } from '../sse.js';
import { parseStreamCursor } from '../../../shared/contracts/stream-cursor.js';
import { ownRunOf } from './own-run.js';
import { eventsServed } from '../schemas/served-media.js';
import type { RouteScope } from './route-scope.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

/** What a run holds: its record, messages, result, steps and events (SSE). */
export function registerRunReadRoutes(app: RouteScope, context: ApiContext): void {
  const { store } = context;
  const ownRun = ownRunOf(store);
  const children = new ChildLinks(store.redis, store.keys);

  app.get('/v1/runs/:id', {
    schema: {
      operationId: 'getRun',
      summary: 'Get a run (poll)',
      description: 'The same run record as `agentq status --json`.',
      tags: ['runs'],
      params: runIdParamsSchema,
      response: { 200: runRecordSchema, ...errors },
    },
    handler: async (request) =>
      withPartialOutput(toRunRecord(await ownRun(request, request.params.id)), (id) => store.reads.state(id)),
  });

  app.get('/v1/runs/:id/messages', {
    schema: {
      operationId: 'getRunMessages',
      summary: "A run's message history",
      description: `Oldest first, a page at a time: at most \`limit\` messages (${READ_BOUNDS.apiItems} unless smaller) and about 4 MiB; \`nextCursor\`, when not null, is the \`cursor\` of the next page.`,
      tags: ['runs'],
      params: runIdParamsSchema,
      querystring: listWindowQuerySchema,
      response: { 200: messagesSchema, ...errors },
    },
    handler: async (request) => {
      const meta = await ownRun(request, request.params.id);
      return readMessagePage(store, meta.id, request.query);
    },
  });

  app.get('/v1/runs/:id/result', {
    schema: {
      operationId: 'getRunResult',
      summary: "A run's result object",
      description:
        "What the run produced, in one object: the answer, every tool execution (arguments and result), the model's responses before its final one, the sources, why the model's last response ended (finishReason), usage and error. A conversation's earlier turns are left out. Readable in every status (a running run's so far).",
      tags: ['runs'],
      params: runIdParamsSchema,
      response: { 200: runResultSchema, ...errors },
    },
    handler: async (request) => readRunResult(store, await ownRun(request, request.params.id)),
  });

  app.get('/v1/runs/:id/steps', {
    schema: {
      operationId: 'getRunSteps',
      summary: "A run's committed steps",
      description: `In commit order, a page at a time: at most \`limit\` steps (${READ_BOUNDS.apiItems} unless smaller) and about 4 MiB; \`nextCursor\`, when not null, is the \`cursor\` of the next page.`,
      tags: ['runs'],
      params: runIdParamsSchema,
      querystring: listWindowQuerySchema,
      response: { 200: stepsSchema, ...errors },
    },
    handler: async (request) => {
      const meta = await ownRun(request, request.params.id);
      return readStepPage(store, meta.id, request.query);
    },
  });

  app.get('/v1/runs/:id/children', {
    schema: {
      operationId: 'getRunChildren',
      summary: "A run's child runs",
      description:
        "The runs its steps started with `context.runGraph` / `runGraphs` (docs/guides/child-runs.md), about `limit` at a time in no set order; `nextCursor`, when not null, is the `cursor` of the next page. Each child's own record names this run as `parentRunId`.",
      tags: ['runs'],
      params: runIdParamsSchema,
      querystring: childrenQuerySchema,
      response: { 200: childrenSchema, ...errors },
    },
    handler: async (request) => {
      const meta = await ownRun(request, request.params.id);
      return children.list(meta.id, request.query);
    },
  });

  app.get('/v1/runs/:id/events', {
    schema: {
      operationId: 'streamRunEvents',
      served: eventsServed,
      summary: "A run's events (Server-Sent Events)",
      description:
        "text/event-stream: one SSE event per run event (`event` = type, `data` = JSON {id, type, data}); all past events first, then live ones; the stream ends after `run-end`. Live model text comes as `token` events (data {type, id, runId, step, task, node, attempt, call, index, text}) after the committed backlog; a `token-reset` opens each attempt, so drop partial text of that step when it comes. Each frame's `id` is the stream's position after it (`<last event id>_<last token id>`): reconnect with `Last-Event-ID` (or `?lastEventId=`) to get every event and kept token after it, each once, then live ones. Tokens are kept (AGENTQ_TOKEN_LOG_MAXLEN, AGENTQ_TOKEN_LOG_TTL_MS) only while someone follows the run; a client that missed more than was kept gets `token-gap` ({runId, after}): drop partial text and wait for the committed message (`step-end`), which is the record.",
      tags: ['runs'],
      params: runIdParamsSchema,
      headers: eventsHeadersSchema,
      querystring: eventsQuerySchema,
      response: { ...errors },
    },
    handler: async (request, reply) => {
      const meta = await ownRun(request, request.params.id);
      await streamRunEvents({
        request,
        reply,
        store,
        events: context.events,
        streams: context.streams,
        tenant: meta.tenant,
        runId: meta.id,
        // The header wins: EventSource sends it on its own reconnects, after the URL's first position.
        after: parseStreamCursor(request.headers['last-event-id'] ?? request.query.lastEventId ?? '0-0') ?? {
          event: '0-0',
          token: null,
        },
        tokens: context.tokens,
        signal: context.closing,
      });
    },
  });
}
