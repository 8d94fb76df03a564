import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { newRunId, runIdForIdempotencyKey } from '../../../shared/contracts/ids.js';
import type { RagOutput } from '../../../shared/retrieval/rag-output.js';
import { isTerminal, type RunRecord } from '../../../shared/contracts/run-record.js';
import { ragInputSchema } from '../../../shared/retrieval/rag-input.js';
import { enqueueRequestSchema } from '../../../shared/operations/runs/run-enqueuer.js';
import type { ApiContext } from '../api-context.js';
import { admitByPolicy } from '../run-policy.js';
import { ApiError, errorBodySchema } from '../errors.js';
import { idempotencyHeadersSchema, runRecordSchema } from '../schemas/run-schemas.js';
import { streamChatAnswer } from '../chat-stream.js';
import { runOutcomeError } from '../run-outcome.js';
import { chatServed } from '../schemas/served-media.js';

const errors = { '4xx': errorBodySchema, '5xx': errorBodySchema };

/** The statuses of a chat whose run did not complete (RUN_OUTCOME_STATUS), each with what it means. */
const chatOutcomes = {
  400: errorBodySchema.describe('INVALID_INPUT: the body, or the worker found the input wrong (e.g. an unknown tool)'),
  403: errorBodySchema.describe(
    "POLICY_DENIED: the tenant's policy (AGENTQ_TENANT_POLICY_FILE) does not allow a tool, the guardrails or the graph asked for",
  ),
  409: errorBodySchema.describe('CANCELLED: the run was cancelled; CONFLICT: the Idempotency-Key names another run'),
  422: errorBodySchema.describe(
    "GUARDRAIL_BLOCKED (details: guardrail, stage, reason), BUDGET_EXCEEDED (the run's token budget), MODEL_REFUSED or CONTENT_FILTERED: the content's outcome",
  ),
  424: errorBodySchema.describe('TOOL_ERROR: a tool the run called failed, and its tool handling fails the run'),
  429: errorBodySchema.describe(
    "TENANT_BUDGET_EXCEEDED (details.budget: the tenant's limit spent), or a rate or in-flight limit (Retry-After)",
  ),
  500: errorBodySchema.describe('INTERNAL: a bug; the API and worker logs have the details'),
  502: errorBodySchema.describe(
    'PROVIDER_ERROR, OUTPUT_TRUNCATED, EMPTY_RESPONSE or UNSUPPORTED_TOOL_CALL: the model provider failed or answered nothing usable',
  ),
  504: errorBodySchema.describe('TIMEOUT: the model provider did not answer in time, after retries'),
};

/** The graph every chat request runs. */
const CHAT_GRAPH = 'rag-agent';

/** Relevance in 0-1, as the sources and retrieved documents give it. */
const relevanceSchema = z
  .number()
  .min(0)
  .max(1)
  .describe(
    "relevance in 0-1, the same for a passage whatever else its search returned and comparable across questions: cosine similarity with the question where a dense model ran (hybrid), else calibrated BM25 (the stronger of BM25 per question word squashed to 0-1 and 0.8 x the share of the question's words the passage holds)",
  );

/** The chat contract (docs/reference/http-api.md), plus the run that produced it and how it answered. */
const chatAnswerSchema = z
  .object({
    answer: z.string(),
    sources: z
      .array(
        z.object({
          title: z.string(),
          path: z.string(),
          page: z.number().nullable(),
          score: relevanceSchema,
          cited: z.boolean().describe('the answer cites a passage of this page'),
        }),
      )
      .describe(
        'the run\'s passages by document and page: with `sources: "all"` (the default, AGENTQ_RAG_SOURCES) every page it retrieved, best score first; with `"cited"` the cited ones in citation order. An answer\'s `[n]` names the n-th. Empty unless the request sets `citations: true`',
      ),
    reasoning_steps: z.array(z.string()),
    search_count: z.number(),
    iterations: z.number(),
    model: z
      .string()
      .describe('the model that answered, or `extractive` (no language model configured: see docs/guides/batch-qa.md)'),
    retrieval: z.enum(['lexical', 'dense', 'hybrid']),
    retrieved: z
      .array(z.object({ title: z.string(), path: z.string(), page: z.number().nullable(), score: relevanceSchema }))
      .describe(
        'every document the run retrieved, once each: the cited ones first (in citation order), then by rank. Given when `sources` is',
      ),
    run_id: z.string().describe('the rag-agent run: GET /v1/runs/<run_id>/steps shows each search'),
  })
  .describe('ChatAnswer');
type ChatAnswer = z.infer<typeof chatAnswerSchema>;

/** Longest a synchronous chat request waits for its run (a day: the answer comes while the client waits). */
const SYNC_WAIT_MAX_MS = 24 * 3600_000;

/**
 * The client's `Prefer` header (RFC 7240): `respond-async` opts into a 202 after a wait, `wait=<s>` sets
 * that wait (else AGENTQ_CHAT_WAIT_MS). Without `respond-async` the request waits for the answer.
 */
function chatPreferenceOf(header: string | string[] | undefined): { respondAsync: boolean; waitMs?: number } {
  const tokens = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(/[,;]/)
    .map((token) => token.trim().toLowerCase());
  const wait = tokens.map((token) => /^wait\s*=\s*(\d+)$/.exec(token)?.[1]).find((value) => value !== undefined);
  return {
    respondAsync: tokens.includes('respond-async'),
    ...(wait === undefined ? {} : { waitMs: Number(wait) * 1000 }),
  };
}

/** Whether the tenant's chat answers may carry `sources` (AGENTQ_CHAT_SOURCES_TENANTS: `*` or a list). */
function sourcesAllowed(allowed: readonly string[], tenant: string): boolean {
  return allowed.includes('*') || allowed.includes(tenant);
}

function tenantOf(request: FastifyRequest): string {
  if (!request.principal)
    throw new AgentqError('INTERNAL', 'route reached without authentication (a scope lacks its auth hook)');
  return request.principal.tenant;
}

/** The answer of a completed run, in the chat contract: `sources` and `retrieved` only when the request asked for `citations`. */
function chatAnswerOf(record: RunRecord, { citations }: { citations: boolean }): ChatAnswer {
  const output = record.output as Partial<RagOutput> | null;
  return {
    answer: output?.answer ?? '',
    // A run that finished before sources were marked listed the cited ones only.
    sources: citations ? (output?.sources ?? []).map((source) => ({ ...source, cited: source.cited ?? true })) : [],
    retrieved: citations ? (output?.retrieved ?? []) : [],
    reasoning_steps: output?.reasoning_steps ?? [],
    search_count: output?.search_count ?? 0,
    iterations: output?.iterations ?? 0,
    model: output?.model ?? 'unknown',
    retrieval: output?.retrieval ?? 'lexical',
    run_id: record.id,
  };
}

/** The chat body: the RAG input, whether to answer as Server-Sent Events, and the conversation it continues. */
const chatBodySchema = ragInputSchema.extend({
  /** Server-Sent Events: reasoning steps, answer tokens, then the answer JSON. @default false */
  stream: z.boolean({ error: 'stream must be true or false' }).optional(),
  /** Continues this conversation (as `POST /v1/runs` does): the answer starts from its earlier turns. @default none */
  conversationId: enqueueRequestSchema.shape.conversationId.describe(
    "continues this conversation of your tenant, as POST /v1/runs does: the run's history starts from its latest completed turn; a new id starts one (GET /v1/conversations/<id>)",
  ),
  /** What this turn does while the conversation's previous one runs. @default the graph's, else queue */
  onBusy: enqueueRequestSchema.shape.onBusy.describe(
    "while the conversation's previous turn is queued or running: `queue` waits behind it (the default), `cancel` cancels it, `reject` fails this turn with CONVERSATION_BUSY (409). Needs conversationId",
  ),
});

/** A finished run's chat answer; a run that did not complete is the error the caller gets (runOutcomeError). */
function answerOrThrow(done: RunRecord, citations: boolean): ChatAnswer {
  if (done.status === 'completed') return chatAnswerOf(done, { citations });
  throw runOutcomeError(done, CHAT_GRAPH);
}

/**
 * `POST /v1/agent/chat`: the RAG input (shared/retrieval/rag-input.ts) → a `rag-agent` run for the caller's tenant. The
 * request waits for the answer up to AGENTQ_CHAT_WAIT_MS: 200 with the chat contract when it came in
 * time, else 202 with the run record and `Location: /v1/runs/<id>` to poll (the run's output is the
 * same contract). The same Idempotency-Key returns the same run and asks nothing twice. With
 * `"stream": true` the answer comes as Server-Sent Events (streamChatAnswer).
 */
export function chatRoutes(context: ApiContext): FastifyPluginAsyncZod {
  const { client, store, config } = context;

  /** The run once finished, or null when `waitMs` passed (or the API is closing) first. */
  const finished = async (runId: string, waitMs: number): Promise<RunRecord | null> => {
    if (waitMs <= 0 || context.closing.aborted) return null;
    let onClose: (() => void) | undefined;
    const closing = new Promise<null>((resolve) => {
      onClose = () => resolve(null);
      context.closing.addEventListener('abort', onClose, { once: true });
    });
    try {
      return await Promise.race([
        client.wait(runId, { timeoutMs: waitMs }).catch((error: unknown) => {
          if (AgentqError.isInstance(error) && error.code === 'TIMEOUT') return null;
          throw error;
        }),
        closing,
      ]);
    } finally {
      if (onClose) context.closing.removeEventListener('abort', onClose);
    }
  };

  /**
   * A synchronous request: the run once finished, however long it takes, or null when the client went
   * away (the run goes on; nobody is left to answer) or the API is closing.
   */
  const untilAnswered = async (runId: string, reply: FastifyReply): Promise<RunRecord | null> => {
    const gone = new AbortController();
    const onClose = () => gone.abort('the client closed the connection');
    reply.raw.once('close', onClose);
    try {
      return await client.wait(runId, {
        timeoutMs: SYNC_WAIT_MAX_MS,
        signal: AbortSignal.any([gone.signal, context.closing]),
      });
    } catch (error) {
      if (AgentqError.isInstance(error) && (error.code === 'CANCELLED' || error.code === 'TIMEOUT')) return null;
      throw error;
    } finally {
      reply.raw.off('close', onClose);
    }
  };

  return async (app) => {
    app.post('/v1/agent/chat', {
      schema: {
        operationId: 'chat',
        served: chatServed,
        summary: 'Ask a question of your documents (agentic RAG)',
        description:
          'Runs `rag-agent` on the caller\'s documents: searches (each one a step), a grounded answer, and its sources — every source a passage the run retrieved. Waits for the answer as long as the client does: 200 with the answer. A client that sends `Prefer: respond-async` (optionally `, wait=<seconds>`) gets 202 with the run record (and `Location`) after that wait (default AGENTQ_CHAT_WAIT_MS) instead, to poll `GET /v1/runs/<id>`, whose `output` is this same answer. `sources` are given to tenants whose plan includes them (AGENTQ_CHAT_SOURCES_TENANTS). Without a language model on the workers the answer is extractive (sentences copied from the passages; `model: "extractive"`). With `"stream": true`: text/event-stream of `run` ({run_id}), `reasoning` ({step}) as each step commits, `token`/`token-reset` (the model\'s text live), then `answer` (this JSON) or `error`; each frame’s id is the run events stream’s cursor there, so `GET /v1/runs/<id>/events` with it as `Last-Event-ID` resumes a broken stream.',
        tags: ['agent'],
        headers: idempotencyHeadersSchema,
        body: chatBodySchema,
        response: {
          200: chatAnswerSchema.describe('ChatAnswer: the run finished'),
          202: runRecordSchema.describe(
            'RunRecord: with `Prefer: respond-async`, still running after the wait; poll the `Location` (GET /v1/runs/<id>) — its `output` becomes the answer',
          ),
          ...errors,
          ...chatOutcomes,
        },
      },
      handler: async (request, reply) => {
        const tenant = tenantOf(request);
        const { stream: wantsStream = false, conversationId, onBusy, ...asked } = request.body;
        admitByPolicy(context, request, { graph: CHAT_GRAPH, input: asked });
        const idempotencyKey = request.headers['idempotency-key'];
        const runId = idempotencyKey ? runIdForIdempotencyKey(tenant, idempotencyKey) : newRunId();
        const existing = await store.reads.get(runId);
        if (existing && existing.tenant !== tenant)
          throw new ApiError(409, 'CONFLICT', `run id ${runId} is taken; use another Idempotency-Key`);
        // Sources (and citation markers) only for tenants whose plan includes them.
        const citations = asked.citations && sourcesAllowed(config.chatSourcesTenants, tenant);
        const input = { ...asked, citations };
        // A stream's slot before the run: a 429 for too many streams starts nothing.
        const releaseStream = wantsStream ? context.streams.take(tenant) : undefined;
        let record: RunRecord;
        try {
          // The in-flight cap and the storage budget are the admission's (TenantAdmission), as for every run.
          // The conversation's turns, memory and onBusy are the run enqueuer's, as for POST /v1/runs.
          record = await client.enqueue(
            { graph: CHAT_GRAPH, input, tenant, idempotencyKey, conversationId, onBusy },
            { derivedRunId: runId },
          );
        } catch (error) {
          releaseStream?.();
          throw error;
        }
        if (existing) reply.header('idempotent-replayed', 'true');
        if (releaseStream) {
          return streamChatAnswer({
            request,
            reply,
            context,
            release: releaseStream,
            runId: record.id,
            answerOf: async (id) => answerOrThrow((await client.get(id)) ?? record, citations),
          });
        }
        const prefer = chatPreferenceOf(request.raw.headers.prefer);
        const done = isTerminal(record.status)
          ? record
          : prefer.respondAsync
            ? await finished(record.id, prefer.waitMs ?? config.chatWaitMs)
            : await untilAnswered(record.id, reply);
        if (!done || done.status === 'waiting' || done.status === 'cancelling') {
          // Only a client that opted in (Prefer: respond-async) gets 202 for a run still going; a
          // synchronous one gets it only when the run waits for input, or the API is stopping.
          if (!prefer.respondAsync && !done && context.closing.aborted)
            throw new ApiError(
              503,
              'UNAVAILABLE',
              `the API is shutting down; the rag-agent run ${record.id} goes on: GET /v1/runs/${record.id} for its answer`,
              { details: { runId: record.id }, headers: { 'retry-after': '1' } },
            );
          const current = done ?? (await client.get(record.id)) ?? record;
          return reply.code(202).header('location', `/v1/runs/${record.id}`).send(current);
        }
        return reply.code(200).send(answerOrThrow(done, citations));
      },
    });
  };
}
