import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import { channel, type StateOf } from '../../../shared/graph/channels.js';
import type { NodeResult } from '../../../shared/graph/graph.js';
import { planGuardrails, type GuardrailPlan } from '../../../shared/contracts/guardrail-spec.js';
import type { ToolCall } from '../../../shared/ports/language-model.js';
import { memoryChannel } from '../../runtime/memory/memory-state.js';
import { turnStartedChannel } from '../memory/conversation-turn.js';
import type { DenseMatch } from './rank-passages.js';
import { mergePassages, type RetrievedPassage } from './retrieved-passage.js';
import type { SearchLogEntry } from './search-log-entry.js';
import type { RagOutput, RagSourcesMode } from '../../../shared/retrieval/rag-output.js';

/** Passages each search fetches: the pool answers are ranked and extracted from. @default 20 */
export const SEARCH_CANDIDATES = 20;
/** Passages of each search the model reads (the best ones) unless AGENTQ_RAG_TOP_K or a run's `top_k` says otherwise. @default 6 */
export const PASSAGES_SHOWN = 6;
/** Searches one model turn may run; further calls in that turn get an error result. @default 4 */
export const MAX_SEARCHES_PER_ROUND = 4;
/** Once the run holds this many passages, a search keeps only those it shows the model (bounded state). @default 150 */
export const MAX_PASSAGES = 150;

/** How the run answers: with the worker's language model, or with the built-in extractive answerer. */
export type RagMode = 'model' | 'extractive';

/** A search a `model` step decided on; one `search` step runs it. */
const pendingSearchSchema = z.object({
  callId: z.string(),
  tool: z.enum(['search', 'refine_and_search']),
  query: z.string().min(1),
  round: z.number().int().min(1),
  /** Words only, no dense side: the extractive answerer's refined query is key words and names, not a sentence to embed. @default false */
  lexical: z.boolean().optional(),
});
export type PendingSearch = z.infer<typeof pendingSearchSchema>;

/** The `rag-agent` graph's state: its channels and their reducers. */
export const ragState = {
  query: channel.replace(''),
  collection: channel.replace('default'),
  maxIterations: channel.replace(3),
  citations: channel.replace(false),
  /** The run's `top_k`; null: the worker's AGENTQ_RAG_TOP_K. */
  topK: channel.replace<number | null>(null),
  /** What the output's `sources` lists: the run's `sources`, else the first model step's AGENTQ_RAG_SOURCES; null before that step (and in runs admitted before this key existed: cited pages). */
  sourcesMode: channel.replace<RagSourcesMode | null>(null),
  /** Fixed by the first step, so a run keeps its mode whichever worker runs its later steps. */
  mode: channel.replace<RagMode | null>(null),
  modelName: channel.replace(''),
  /** The searches of the last decision, fanned out to `search` steps. */
  pendingSearches: channel.replace<PendingSearch[]>([]),
  /** Search rounds so far (a decision that ran searches, or a model turn that tried to). */
  rounds: channel.replace(0),
  passages: channel.custom<RetrievedPassage[], RetrievedPassage[]>(mergePassages, () => []),
  searches: channel.append<SearchLogEntry>(),
  reasoning: channel.append<string>(),
  /** The answer with `[id]` markers of the passages it cites. */
  answer: channel.replace(''),
  cited: channel.replace<string[]>([]),
  /** The extractive answer's dense sentence match of its best passages (passage id → similarity); empty when not asked. */
  denseMatch: channel.replace<DenseMatch>({}),
  /** The weight it was ranked with (AGENTQ_RAG_DENSE_WEIGHT when the answer was made), so the output ranks the same. */
  denseWeight: channel.replace(0),
  done: channel.replace(false),
  /** The model step added this run's question; false until then (a conversation's run starts with earlier turns); null in runs admitted before this key existed. */
  turnStarted: turnStartedChannel(),
  /** Which older messages prompts show as a summary (worker/agents/memory); conversations seed it. */
  memory: memoryChannel(),
  /** The prompt is too long: the next step summarises the history. */
  summarize: channel.replace(false),
  /** The graph's guardrails with the run's overrides (none in runs admitted before this key existed). */
  guardrails: channel.replace<GuardrailPlan>(() => planGuardrails()),
  /** Output guardrail reprompts so far. */
  reprompts: channel.replace(0),
  /** Tools of the worker's registry offered beside the rag-agent's three (the run's `tools`, else the graph's). */
  extraTools: channel.replace<string[]>([]),
  /** The graph offers the model `plan` (createRagAgentGraph's `planning`); false in runs admitted before this key existed. */
  planning: channel.replace(false),
  /** The sub-questions the model planned (the `plan` tool), in order; empty until it plans. */
  plan: channel.replace<string[]>([]),
  /** Calls of those tools from the last model turn, fanned out to `tool` steps. */
  pendingToolCalls: channel.replace<ToolCall[]>([]),
  /** The run asked for the answer cache (its `answer_cache`): the graph and options its answer is cached under; null: not asked. */
  answerCache: channel.replace<RagAnswerCacheScope | null>(null),
  /** A cached answer this run returned instead of answering: its output, and the run that made it. */
  cachedAnswer: channel.replace<CachedAnswer | null>(null),
  /** Search results join the stored history (false: a short note does, and the model reads them from `retrievedContent`). */
  storeRetrievedContent: channel.replace(true),
  /** With `storeRetrievedContent` false: each search's result as the model reads it, by tool call id, for this run's prompts. */
  retrievedContent: channel.custom<Record<string, string>, Record<string, string>>(
    (current, update) => ({ ...current, ...update }),
    () => ({}),
  ),
};
export type RagState = StateOf<typeof ragState>;
export type RagUpdate = NodeResult<typeof ragState>;

/** What a run that asked for the answer cache keeps of it from its input (AnswerCacheScope less what steps know). */
export interface RagAnswerCacheScope {
  graph: string;
  graphVersion: string;
  /** The input's options that shape the answer. */
  options: Record<string, unknown>;
}

/** A cached answer returned by a run: the output as stored and where it came from (the run's output says `cached`). */
export interface CachedAnswer {
  output: RagOutput;
  from: string;
  at: string;
}

/** The search a `search` step was sent (its `Send` argument). */
export function pendingSearchOf(arg: unknown): PendingSearch {
  const parsed = pendingSearchSchema.safeParse(arg);
  if (!parsed.success)
    throw new AgentqError(
      'INTERNAL',
      `rag-agent: the search step got no search to run (arg ${JSON.stringify(arg)?.slice(0, 200)})`,
    );
  return parsed.data;
}
