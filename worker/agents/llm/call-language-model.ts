import { SpanKind, trace, type Attributes } from '@opentelemetry/api';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { agentSettingsOf, languageModelOf } from '../agent-services.js';
import type {
  LanguageModel,
  LanguageModelRequest,
  LanguageModelResponse,
  TokenUsage,
} from '../../../shared/ports/language-model.js';
import { estimateMessageTokens, estimatePromptTokens } from '../../../shared/llm/estimate-tokens.js';
import { usageCostOf, type ModePrices, type PricingMode, type UsageCost } from '../../../shared/llm/price-table.js';
import { createJsonFieldTextStream } from './json-field-text-stream.js';
import { takeProviderSlot } from './take-provider-slot.js';
import { reserveTenantBudget } from './reserve-tenant-budget.js';
import { recordSpanError } from '../../../shared/telemetry/record-span-error.js';
import { currentTelemetry } from '../../../shared/telemetry/telemetry.js';
import { observeModelCall } from './model-listeners.js';
import { checkImageUrls } from './check-image-urls.js';
import { usableResponse, type AcceptableOutcome } from './usable-response.js';
import { transformChatRequest } from './chat-request-transformer.js';
import { promptCacheKeyOf } from './prompt-cache-key.js';

export interface CallLanguageModelOptions {
  /** The memo key of this call within the step; a node making several calls gives each its own. @default 'model' */
  key?: string;
  /**
   * The request's prompt tokens when the caller already counted them (`estimatePromptTokens` of the
   * same messages and tools), so they are not counted twice. @default counted here when needed
   */
  promptTokens?: number;
  /**
   * Stream this string field of this tool's arguments to live subscribers as text, for a node whose
   * answer comes as a tool call (rag-agent's `final_answer`). @default only the message content streams
   */
  streamToolField?: { tool: string; field: string };
  /**
   * Answers without usable output the caller takes instead of failing the step (see `usableResponse`):
   * an empty reply, a `length` or `content_filter` stop with nothing in it, a refusal. @default none
   */
  accept?: readonly AcceptableOutcome[];
}

/** A model response as a node uses it: usage always filled in, with its estimated cost. */
export interface ModelCall extends LanguageModelResponse {
  usage: TokenUsage;
  /** True when the provider sent no usage and the tokens were counted locally. */
  usageEstimated: boolean;
  costUsd: number;
  /** What the call would have cost with no input token read from the provider's prompt cache. */
  uncachedCostUsd: number;
  /** False when the response was saved by an earlier attempt of this step and not requested again. */
  fresh: boolean;
  /** The provider batch that answered, when the call went through the provider's Batch API (priced at batch prices). */
  providerBatch?: string;
}

type SavedResponse = Omit<ModelCall, 'costUsd' | 'uncachedCostUsd' | 'fresh'>;

/**
 * One model call inside a node, done the way the step engine and telemetry require:
 * - rewritten first by the graph's and the worker's chat request transformers (chat-request-transformer.ts):
 *   every agent's calls come through here, so none skips them, and their request is the one sent and recorded;
 * - paid at most once per step (docs/concepts/at-most-once.md): the response is saved with `context.memo` before the
 *   node acts on it, so a retried or re-delivered step reuses it instead of asking again;
 * - refused (BUDGET_EXCEEDED, no retry) before the request when the run's remaining token budget is
 *   smaller than the estimated prompt plus `maxTokens`;
 * - within the provider limits shared by all workers (AGENTQ_RATE_LIMITS): a slot for the estimated
 *   prompt plus `maxTokens` is taken before the request and settled with the real usage after it; a
 *   full window parks the step (RATE_LIMITED with `retryAfterMs`, no attempt spent). All of this is
 *   inside the memoised computation, so a saved response never takes a slot;
 * - traced as a GenAI `chat` span, a child of the step's span;
 * - its usage (the provider's, or a local estimate when it sends none) and cost recorded on the step,
 *   whether the response is fresh or saved.
 */
export async function callLanguageModel(
  context: NodeContext,
  request: Omit<LanguageModelRequest, 'abortSignal'>,
  { key = 'model', promptTokens, streamToolField, accept = [] }: CallLanguageModelOptions = {},
): Promise<ModelCall> {
  const model = languageModelOf(context);
  const settings = agentSettingsOf(context);
  // The rest is a copy already: the default max_tokens goes on it, not on a second one.
  const { onTextDelta, onToolCallDelta, ...untransformed } = request;
  if (untransformed.maxTokens === undefined && settings.maxTokens !== undefined)
    untransformed.maxTokens = settings.maxTokens;
  // The transformers' request is the one sent, saved and recorded: a replay asks it again and compares.
  const sent = await transformChatRequest(context, untransformed, key);
  // Before anything is claimed or paid: a refused image fails the step as the input's fault.
  if (settings.checkImageUrls !== false) await checkImageUrls(sent.messages);
  const streamText = context.streamText;
  // A derived cache key goes to the provider only, not into `asked`: a replay compares what the run asked.
  const cacheKey = sent.promptCacheKey ?? promptCacheKeyOf(sent.model ?? model.modelId, sent);
  const fullRequest: LanguageModelRequest = {
    ...sent,
    ...(cacheKey === undefined ? {} : { promptCacheKey: cacheKey }),
    abortSignal: context.abortSignal,
    ...(onTextDelta ? { onTextDelta } : {}),
    ...(onToolCallDelta ? { onToolCallDelta } : {}),
    // Live text for subscribers; the memo below still saves the complete response before it is acted on.
    ...(streamText ? { onTextDelta: (text: string) => streamText(text, key) } : {}),
    ...(streamText && streamToolField
      ? { onToolCallDelta: toolFieldStreamer(streamToolField, (text) => streamText(text, key)) }
      : {}),
  };
  let fresh = false;
  /** A fresh response's cost, priced once for its count and for the step. */
  let freshCost: { response: SavedResponse; cost: UsageCost } | undefined;
  // What was asked (callbacks left out): time travel records it with the response and a replay compares it.
  const asked = { request: sent };
  let counting: Promise<unknown> | undefined;
  // The caller's count was of its own request: a transformed one is counted again.
  let prompt = sent === untransformed ? promptTokens : undefined;
  const countPrompt = async () => (prompt ??= await estimatePromptTokens(fullRequest.messages, fullRequest.tools));
  const modelId = fullRequest.model ?? model.modelId;
  // The tenant-budget reservation goes out beside the claim (memo), not after it: one round trip before
  // the request instead of two. A tenant without limits holds nothing; a hold that a saved response (or
  // the run's own budget) makes unneeded is released, and a refusal surfaces only where the hold is used.
  const reserving = reserveTenantBudget(context, {
    key,
    modelId,
    prices: settings.prices,
    tokens: async () => (await countPrompt()) + (fullRequest.maxTokens ?? 0),
  });
  reserving.catch(() => undefined);
  let reserved = false;
  const saved = await context
    .memo<SavedResponse>(
      key,
      async (paid) => {
        await checkBudget(context, fullRequest, countPrompt);
        reserved = true;
        const spend = await reserving;
        // A run of a batch that asked for the provider's Batch API parks here until its answer is
        // saved (the collector counts its spend then); the tenant's budgets were checked just above.
        // A batch's call goes in its batch's mode: parked in a provider batch (an answer comes back here only
        // once saved), or a LiveCall that sends it live or on flex (`serviceTier` goes on the request sent,
        // never on the `asked` one a replay compares) and sends a refused flex call on as the plan says.
        const routed = await context.services.providerBatchRouter
          ?.send(context, key, fullRequest, paid)
          .catch(async (error: unknown) => {
            await spend.release();
            throw error;
          });
        if (routed && 'message' in routed) {
          await spend.release();
          return routed;
        }
        const generate = (tier: { serviceTier?: 'flex' }) =>
          tracedGenerate(model, { ...fullRequest, ...tier }, settings.traceContent);
        const slot = await takeProviderSlot(context, {
          provider: model.provider,
          model: modelId,
          tokens: async () => (await countPrompt()) + (fullRequest.maxTokens ?? 0),
        });
        let response: SavedResponse;
        try {
          // The claim and the run's cursor, checked right before the request leaves (a paused
          // worker's claim may have been taken over, or its step committed elsewhere, meanwhile).
          await paid?.confirm();
          fresh = true;
          // In-process listeners hear the request and its response or error (model-listeners.ts).
          response = await observeModelCall(context, model, fullRequest, () =>
            routed ? routed.generate(generate) : generate({}),
          );
        } catch (error) {
          await spend.release();
          throw error;
        }
        // Counted while the memo saves the response, not before it: neither waits for the other (both settles
        // log their own failures). A crash between the two leaves one call's spend uncounted either way (the
        // count is idempotent per call id, never doubled), as it did when the count went first.
        freshCost = { response, cost: callCostOf(settings, response, fullRequest, modelId) };
        counting = Promise.all([
          slot.settle(response.usage.inputTokens + response.usage.outputTokens),
          spend.settle(response.usage, response.model, freshCost.cost.costUsd),
        ]);
        // A retryable rejection (an empty reply) is checked before the memo saves the response: saved, it
        // would be replayed by every retry of the step and fail each the same way; unsaved, a retry asks again.
        // Its usage is recorded here, since the code after the memo never sees it.
        const rejection = rejectionOf(response, accept);
        if (rejection?.retryable) {
          await counting;
          recordCallUsage(context, response, freshCost.cost);
          throw rejection;
        }
        return response;
      },
      asked,
    )
    .finally(() => {
      if (!reserved)
        void reserving.then(
          (hold) => hold.release(),
          () => undefined,
        );
    });
  await counting;
  const { costUsd, uncachedCostUsd } = recordCallUsage(
    context,
    saved,
    freshCost?.response === saved ? freshCost.cost : callCostOf(settings, saved, fullRequest, modelId),
  );
  // A planned batch's budget: the call's hold becomes its cost (once, whichever attempt gets here first).
  await context.services.providerBatchRouter?.settle(context, key, costUsd);
  // Every response is checked here, fresh or saved: a provider batch's answer reaches the step only
  // through the memo. A retryable rejection seen here was saved (a provider batch's empty answer) and would
  // be replayed by each retry, so it fails the step at once.
  let usable: SavedResponse;
  try {
    usable = usableResponse(saved, accept);
  } catch (error) {
    if (!(error instanceof AgentqError) || !error.retryable) throw error;
    throw new AgentqError(
      error.code,
      `${error.message}; it was saved as this step's answer, so a retry would only read it again`,
      { details: error.details },
    );
  }
  return { ...usable, costUsd, uncachedCostUsd, fresh };
}

/** Records a response's usage on the step at its cost (callCostOf); → that cost. */
function recordCallUsage(context: NodeContext, response: SavedResponse, cost: UsageCost): UsageCost {
  const { usage, model, finishReason } = response;
  context.recordUsage({ ...usage, ...cost, model, finishReason });
  return cost;
}

/** A response's cost in the mode it was answered in, and without its cached tokens. */
function callCostOf(
  prices: ModePrices,
  response: SavedResponse,
  request: LanguageModelRequest,
  modelId: string,
): UsageCost {
  return usageCostOf(prices, modeOf(response, request), response.usage, response.model, modelId);
}

/** The mode a response was answered in, for its price: the provider's Batch API, else the tier the provider says served it, else the one asked. */
function modeOf(response: SavedResponse, request: LanguageModelRequest): PricingMode {
  if (response.providerBatch) return 'batch';
  return (response.serviceTier ?? request.serviceTier) === 'flex' ? 'flex' : 'live';
}

/** The error that fails the step for this response, or undefined when the run can use it. */
function rejectionOf(response: LanguageModelResponse, accept: readonly AcceptableOutcome[]): AgentqError | undefined {
  try {
    usableResponse(response, accept);
    return undefined;
  } catch (error) {
    if (error instanceof AgentqError) return error;
    throw error;
  }
}

/** A tool-call delta handler that sends the text of one string field of one tool's arguments (the first such call). */
function toolFieldStreamer(
  { tool, field }: { tool: string; field: string },
  send: (text: string) => void,
): NonNullable<LanguageModelRequest['onToolCallDelta']> {
  const extractors = new Map<number, (fragment: string) => string>();
  return ({ index, name, arguments: fragment }) => {
    if (name !== tool) return;
    let extract = extractors.get(index);
    if (!extract) extractors.set(index, (extract = createJsonFieldTextStream(field)));
    const text = extract(fragment);
    if (text !== '') send(text);
  };
}

async function checkBudget(
  context: NodeContext,
  request: LanguageModelRequest,
  countPrompt: () => Promise<number>,
): Promise<void> {
  const remaining = context.tokenBudgetRemaining;
  if (remaining === null) return;
  const prompt = await countPrompt();
  const needed = prompt + (request.maxTokens ?? 0);
  if (needed > remaining) {
    throw new AgentqError(
      'BUDGET_EXCEEDED',
      `node '${context.node}' needs about ${needed} tokens (prompt ≈ ${prompt}${request.maxTokens === undefined ? '' : ` + max_tokens ${request.maxTokens}`}) but the run has ${remaining} left of its token budget; raise options.tokenBudget to let it continue`,
      { details: { estimatedTokens: needed, remainingTokens: remaining } },
    );
  }
}

/** The request in a `chat {model}` span (OpenTelemetry GenAI semantic conventions). */
async function tracedGenerate(
  model: LanguageModel,
  request: LanguageModelRequest,
  traceContent: boolean,
): Promise<SavedResponse> {
  // Tracing off (no exporter configured): no span, attributes or context to make, as for the step's own span.
  if (!currentTelemetry().enabled) return withUsage(request, await model.generate(request));
  const attributes: Attributes = {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': model.provider,
    // The older name of the same attribute, still read by many trace viewers.
    'gen_ai.system': model.provider,
    'gen_ai.request.model': request.model ?? model.modelId,
  };
  if (request.maxTokens !== undefined) attributes['gen_ai.request.max_tokens'] = request.maxTokens;
  if (request.temperature !== undefined) attributes['gen_ai.request.temperature'] = request.temperature;
  if (request.responseFormat)
    attributes['gen_ai.output.type'] = request.responseFormat.type === 'text' ? 'text' : 'json';
  if (traceContent) {
    attributes['gen_ai.input.messages'] = JSON.stringify(request.messages);
    if (request.tools?.length) attributes['gen_ai.tool.definitions'] = JSON.stringify(request.tools);
  }
  const tracer = trace.getTracer('agentq');
  return tracer.startActiveSpan(
    `chat ${request.model ?? model.modelId}`,
    { kind: SpanKind.CLIENT, attributes },
    async (span) => {
      try {
        const response = await withUsage(request, await model.generate(request));
        const { usage, usageEstimated } = response;
        span.setAttributes({
          'gen_ai.response.model': response.model,
          'gen_ai.response.finish_reasons': [response.finishReason],
          'gen_ai.usage.input_tokens': usage.inputTokens,
          'gen_ai.usage.output_tokens': usage.outputTokens,
          'agentq.usage.estimated': usageEstimated,
        });
        if (response.responseId) span.setAttribute('gen_ai.response.id', response.responseId);
        if (traceContent) span.setAttribute('gen_ai.output.messages', JSON.stringify([response.message]));
        return response;
      } catch (error) {
        recordSpanError(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** A response with its usage: the provider's, or counted locally when it sent none (`usageEstimated`). */
async function withUsage(request: LanguageModelRequest, response: LanguageModelResponse): Promise<SavedResponse> {
  if (response.usage) return { ...response, usage: response.usage, usageEstimated: false };
  const usage = {
    inputTokens: await estimatePromptTokens(request.messages, request.tools),
    outputTokens: await estimateMessageTokens(response.message),
  };
  return { ...response, usage, usageEstimated: true };
}
