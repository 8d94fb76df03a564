import { AgentqError } from '../../../shared/contracts/errors.js';
import { defineGraph } from '../../../shared/graph/define-graph.js';
import { END, Send, START } from '../../../shared/graph/graph.js';
import { planGuardrails, type GuardrailsInput } from '../../../shared/contracts/guardrail-spec.js';
import { memoryChoiceOf } from '../schemas/react-agent-input.js';
import { multiAgentInputSchema, type MultiAgentOutput, type RecallMode } from '../schemas/multi-agent-input.js';
import { leadChoiceOf, recalledCount } from './expert-recall.js';
import { transformingNodes, type ChatRequestTransformer } from '../llm/chat-request-transformer.js';
import {
  CONSULT_MAX_ATTEMPTS,
  consultNode,
  leadNode,
  multiAgentChannels,
  recallNode,
  summarizeNode,
} from './multi-agent-nodes.js';
export { expertSystemPrompt, leadSystemPrompt } from './multi-agent-nodes.js';

const RETRY = { retry: { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 20_000 } } as const;

/** How a multi-agent graph is built: its name and how its runs choose their lead unless their input says. */
export interface MultiAgentGraphOptions {
  /** @default 'multi-agent' */
  name?: string;
  /** @default '1' */
  version?: string;
  /** How runs choose their lead (a run's `recall` overrides). @default 'similarity' */
  recall?: RecallMode;
  /** The expert who leads with `recall: 'specific'` (a run's `lead` overrides); runs must list it. */
  lead?: string;
  /** Input guardrails on the query, output guardrails on the lead's answer (a run's `guardrails` replaces a stage's list). @default none */
  guardrails?: GuardrailsInput;
  /** Rewrites each model request of the graph's runs (the lead's and each expert's) before it is sent; the worker's runs after it. @default none */
  chatRequestTransformer?: ChatRequestTransformer;
}

/**
 * A `multi-agent` graph: `recall` ranks the input's experts by similarity to the query — embedding
 * cosine similarity through the embedder (EMBED_MODEL), else a deterministic lexical BM25 ranking,
 * labelled in the output as `recall: 'embedding' | 'lexical'` — and keeps the top `topN`; or, with
 * recall `first` / `specific`, the first expert or the named one leads and every other expert, in list
 * order, is its colleague (the Rust runtime's recall modes; a run's `topN` caps them). The lead (`lead`, a tool loop like
 * react-agent's) calls the others as tools; each call is a `consult` step (one model call with that
 * expert's persona; parallel calls run as one superstep). The run's `tools` (registered tools) are offered
 * to the lead beside its colleagues; a call of one is a `consult` step run through the one tool path
 * (allow-list, approval, the tools' hooks), as react-agent's are.
 *
 * Memory: when the lead's prompt would pass AGENTQ_SUMMARIZE_AT of the context window (or the run's
 * `memory.summarizeAt`), `lead` sends nothing and routes to `summarize`, its own checkpointed step, which
 * folds older consultations into a summary; the query stays verbatim in the system message.
 * `memory: {window: N}` shows the last N messages instead.
 */
export function createMultiAgentGraph({
  name = 'multi-agent',
  version = '1',
  recall: graphRecall = 'similarity',
  lead: graphLead,
  guardrails,
  chatRequestTransformer,
}: MultiAgentGraphOptions = {}) {
  const node = transformingNodes(chatRequestTransformer);
  if (graphRecall === 'specific' && !graphLead)
    throw new AgentqError('INVALID_INPUT', "createMultiAgentGraph: recall 'specific' needs lead, the expert who leads");
  return defineGraph({
    name,
    version,
    input: multiAgentInputSchema,
    state: multiAgentChannels(),
    initialState: (input) => {
      const choice = leadChoiceOf(input, graphRecall, graphLead);
      return {
        query: input.query,
        turnStarted: false,
        experts: input.experts,
        topN: recalledCount(input.topN, choice.recallMode, input.experts.length),
        ...choice,
        guardrails: planGuardrails(guardrails, input.guardrails),
        tools: input.tools ?? [],
        ...memoryChoiceOf(input.memory),
        accept: input.accept ?? [],
      };
    },
    output: (state): MultiAgentOutput => ({
      answer: state.answer,
      lead: state.selected[0]?.name ?? '',
      recall: state.recall ?? 'lexical',
      experts: state.selected,
      consulted: state.consulted,
    }),
  })
    .node('recall', node(recallNode), RETRY)
    .node('lead', node(leadNode), RETRY)
    .node('consult', node(consultNode), { retry: { ...RETRY.retry, maxAttempts: CONSULT_MAX_ATTEMPTS } })
    .node('summarize', node(summarizeNode), RETRY)
    .edge(START, 'recall')
    .edge('recall', 'lead')
    .route(
      'lead',
      (state) =>
        state.summarize
          ? 'summarize'
          : state.pendingConsults.length > 0
            ? state.pendingConsults.map((call) => new Send('consult', call))
            : state.reprompting
              ? 'lead'
              : END,
      ['summarize', 'consult', 'lead', END],
    )
    .edge('summarize', 'lead')
    .edge('consult', 'lead')
    .build();
}

/** The built-in `multi-agent@1`. */
export const multiAgentGraph = createMultiAgentGraph();
