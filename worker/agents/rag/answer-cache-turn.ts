import type { ParsedRagInput } from '../../../shared/retrieval/rag-input.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { NodeFunction } from '../../../shared/graph/graph.js';
import type { AnswerCacheScope } from '../../../shared/store/answer-cache.js';
import { agentSettingsOf } from '../agent-services.js';
import { ragOutputOf } from './rag-output-of.js';
import { mergePassages } from './retrieved-passage.js';
import type { RagMode, RagState, RagUpdate, ragState } from './rag-state.js';

type RagNode = NodeFunction<typeof ragState>;

/**
 * The `model` node with the answer cache around it, for runs that asked for it (`answer_cache`) on a worker
 * that has one (`services.answerCache`; conversations' turns never use it: their history shapes the answer).
 *
 * The first decision looks the question up first: a hit ends the run in that step with the cached output
 * — no search, no model call, no tokens — and a miss (none, or a cited document changed or gone) goes on
 * as usual. The decision that gives the final answer stores it, when it cites at least one passage (an
 * answer that cites nothing cannot be checked against the collection later, so it is not kept): the output
 * as the run will return it, with the content hash each cited document has now. An answer reaches this
 * point only after the citation check and the output guardrails, so only answers that passed them are kept.
 */
export function withAnswerCache(inner: RagNode): RagNode {
  return async (current, context) => {
    const cache = context.services.answerCache;
    if (!current.answerCache || !cache || context.conversationId) return inner(current, context);
    const scope = scopeOf(current, context);
    if (current.mode === null) {
      const found = await cache.lookup(context.tenant, scope);
      if (found.hit) {
        context.logger.debug({ from: found.entry.runId }, 'rag-agent: answered from the answer cache');
        const output = found.entry.output as NonNullable<RagState['cachedAnswer']>['output'];
        return {
          done: true,
          mode: modeOf(context),
          answer: output.answer,
          cachedAnswer: { output, from: found.entry.runId, at: found.entry.at },
        };
      }
      if (found.reason === 'stale')
        context.logger.debug({ changed: found.changed }, 'rag-agent: a cached answer cites changed documents');
    }
    const update = await inner(current, context);
    if (update && update.done && (update.cited?.length ?? 0) > 0) await storeAnswer(current, update, context, scope);
    return update;
  };
}

/** The input's options that shape the answer (the question and collection are keyed apart; `sources` and `top_k` are resolved by the worker). */
export function answerOptionsOf(input: ParsedRagInput): Record<string, unknown> {
  return {
    max_iterations: input.max_iterations,
    citations: input.citations,
    tools: input.tools ?? null,
    guardrails: input.guardrails ?? null,
  };
}

/** What the run's question is cached under: its input's scope with the model and the sources mode this worker fixes. */
function scopeOf(current: Readonly<RagState>, context: NodeContext): AnswerCacheScope {
  const asked = current.answerCache!;
  const model = context.services.languageModel;
  return {
    collection: current.collection,
    graph: asked.graph,
    graphVersion: asked.graphVersion,
    model: model && modeOf(context) === 'model' ? `${model.provider}:${model.modelId}` : 'extractive',
    question: current.query,
    options: {
      ...asked.options,
      sources: current.sourcesMode ?? agentSettingsOf(context).ragSources,
      top_k: current.topK ?? agentSettingsOf(context).ragTopK,
    },
  };
}

function modeOf(context: NodeContext): RagMode {
  return context.services.languageModel ? 'model' : 'extractive';
}

/** Stores the final answer; a failure to store is logged, never the run's failure (the answer stands). */
async function storeAnswer(
  current: Readonly<RagState>,
  update: RagUpdate,
  context: NodeContext,
  scope: AnswerCacheScope,
): Promise<void> {
  const cache = context.services.answerCache!;
  try {
    // The state the run ends with: append channels append, passages merge as their reducer does.
    const final = {
      ...current,
      ...update,
      passages: mergePassages(current.passages, update.passages ?? []),
      searches: current.searches.concat(update.searches ?? []),
      reasoning: current.reasoning.concat(update.reasoning ?? []),
    } as RagState;
    const docIds = [
      ...new Set(
        (update.cited ?? []).flatMap((id) => final.passages.find((passage) => passage.id === id)?.docId ?? []),
      ),
    ];
    const cited = await cache.currentVersions(context.tenant, docIds);
    // A cited document gone already (deleted while the run answered): the next lookup would miss anyway.
    if (cited.length < docIds.length) return;
    await cache.store(context.tenant, scope, {
      runId: context.runId,
      at: new Date().toISOString(),
      output: ragOutputOf(final),
      cited,
    });
  } catch (error) {
    context.logger.warn(
      { err: (error as Error).message },
      'rag-agent: the answer could not be stored in the answer cache',
    );
  }
}
