import { SpanKind, trace } from '@opentelemetry/api';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import { agentSettingsOf } from '../agent-services.js';
import type { Embedder, EmbedResult } from '../../../shared/ports/embedder.js';
import { estimateTextTokens } from '../../../shared/llm/estimate-tokens.js';
import { costOf } from '../../../shared/llm/price-table.js';
import { takeProviderSlot } from './take-provider-slot.js';
import { recordSpanError } from '../../../shared/telemetry/record-span-error.js';

export interface EmbedTextsOptions {
  /** The memo key of this call within the step; a node embedding several times gives each its own. @default 'embed' */
  key?: string;
}

/** Vectors as a node uses them. */
export interface EmbedCall extends EmbedResult {
  costUsd: number;
  /** False when an earlier attempt of this step saved the vectors and they were not requested again. */
  fresh: boolean;
}

/**
 * One embeddings call inside a node, the way `callLanguageModel` does a chat call: saved with
 * `context.memo` before it is used (paid at most once), within the provider limits (AGENTQ_RATE_LIMITS, an entry for
 * the embedding model), traced as a GenAI `embeddings` span, usage and cost (AGENTQ_PRICES, input
 * price) recorded on the step. An in-process model (`embedder.inProcess`, the local one) is only traced:
 * no memo, no provider limits, no usage charged to the run or tenant.
 */
export async function embedTexts(
  context: NodeContext,
  embedder: Embedder,
  texts: readonly string[],
  { key = 'embed' }: EmbedTextsOptions = {},
): Promise<EmbedCall> {
  if (embedder.inProcess) {
    // Nothing to pay for or protect: computed again on a retry (deterministic, milliseconds), no usage charged.
    const result = await tracedEmbed(embedder, texts, context.abortSignal);
    return { ...result, costUsd: 0, fresh: true };
  }
  let fresh = false;
  const saved = await context.memo<EmbedResult>(key, async () => {
    const slot = await takeProviderSlot(context, {
      provider: embedder.provider,
      model: embedder.modelId,
      tokens: async () =>
        (await Promise.all(texts.map((text) => estimateTextTokens(text)))).reduce((sum, count) => sum + count, 0),
    });
    fresh = true;
    const result = await tracedEmbed(embedder, texts, context.abortSignal);
    await slot.settle(result.usage.inputTokens);
    return result;
  });
  if (saved.vectors.length !== texts.length) {
    throw new AgentqError(
      'PROVIDER_ERROR',
      `the embedder '${embedder.modelId}' returned ${saved.vectors.length} vectors for ${texts.length} texts`,
      { retryable: true },
    );
  }
  const usage = { inputTokens: saved.usage.inputTokens, outputTokens: 0 };
  const costUsd = costOf(agentSettingsOf(context).prices, usage, saved.model, embedder.modelId);
  context.recordUsage({ ...usage, costUsd, model: saved.model });
  return { ...saved, costUsd, fresh };
}

function tracedEmbed(embedder: Embedder, texts: readonly string[], abortSignal: AbortSignal): Promise<EmbedResult> {
  const attributes = {
    'gen_ai.operation.name': 'embeddings',
    'gen_ai.provider.name': embedder.provider,
    'gen_ai.system': embedder.provider,
    'gen_ai.request.model': embedder.modelId,
  };
  return trace
    .getTracer('agentq')
    .startActiveSpan(`embeddings ${embedder.modelId}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      try {
        const result = await embedder.embed(texts, { abortSignal });
        span.setAttributes({
          'gen_ai.response.model': result.model,
          'gen_ai.usage.input_tokens': result.usage.inputTokens,
          'gen_ai.embeddings.dimension.count': result.dimensions,
        });
        return result;
      } catch (error) {
        recordSpanError(span, error);
        throw error;
      } finally {
        span.end();
      }
    });
}
