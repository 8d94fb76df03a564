import { z } from 'zod';
import { guardrailsInputSchema } from '../../../shared/contracts/guardrail-spec.js';
import { memoryOptionSchema } from './react-agent-input.js';
import { acceptOptionSchema } from '../llm/usable-response.js';

/** One expert of a `multi-agent` run. */
const expertSchema = z
  .object({
    /** How the expert is called, also its tool name: 1-64 letters, digits, `_` or `-`. */
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'expert names are 1-64 characters of letters, digits, "_" or "-"'),
    /** What the expert knows: used to recall it for a query, and as its persona. */
    description: z.string().trim().min(1, 'an expert needs a description').max(4000),
    /** Its own system prompt; omitted: one built from the name and description. */
    system: z.string().max(20_000).optional(),
  })
  .strict();

/**
 * How a run's lead is chosen: `similarity` (the default) ranks the experts by similarity to the query
 * (embedding cosine when an embedder is configured, lexical BM25 otherwise); `first` makes the first
 * expert of the list lead; `specific` makes the expert named by `lead` lead. With `first` and `specific`
 * the colleagues are every other expert in list order (or up to `topN` experts in all, when the run sets
 * it), and nothing is embedded.
 */
const RECALL_MODES = ['similarity', 'first', 'specific'] as const;
export type RecallMode = (typeof RECALL_MODES)[number];

/** The names of `experts`, for messages that list the known ones. */
export function expertNames(experts: readonly { name: string }[]): string {
  return experts.map((expert) => `'${expert.name}'`).join(', ');
}

/**
 * Input of the built-in `multi-agent` graph: the `topN` experts most similar to `query` are recalled
 * (embedding cosine similarity when EMBED_MODEL is set, lexical BM25 otherwise); the best one leads and
 * may consult the others, which it calls as tools.
 *
 * ```json
 * { "query": "Is it safe to run Redis without AOF for a job queue?",
 *   "experts": [
 *     { "name": "redis", "description": "Redis persistence, AOF, RDB snapshots, replication and memory policies" },
 *     { "name": "queues", "description": "Job queues, BullMQ, retries, idempotency and at-least-once delivery" },
 *     { "name": "chef", "description": "French cooking, sauces and pastry" } ],
 *   "topN": 2 }
 * ```
 */
export const multiAgentInputSchema = z
  .object({
    /** The user's question or task. */
    query: z.string().trim().min(1, 'query must not be empty').max(100_000),
    experts: z
      .array(expertSchema)
      .min(1, 'experts must list at least one expert')
      .max(64, 'experts may list at most 64 experts')
      .refine(
        (experts) => new Set(experts.map((expert) => expert.name)).size === experts.length,
        'expert names must be unique',
      ),
    /**
     * Experts recalled: the lead and its colleagues, which are its tools (a cap on them with `first` and
     * `specific`). @default 3 with `similarity`; every expert with `first` and `specific`
     */
    topN: z.number().int().min(1).max(64).optional(),
    /** Model answers without usable output the run takes as its answer instead of failing: `empty`, `length`, `content_filter`, `refusal`. @default none */
    accept: acceptOptionSchema.optional(),
    /** `{ window: N }`: the lead sees its system prompt and the query, then only the last N messages (consultations); `{ summarizeAt: x }`: summarise past that share of the context window. @default the summariser at AGENTQ_SUMMARIZE_AT */
    memory: memoryOptionSchema.optional(),
    /** How the lead is chosen (RECALL_MODES). @default the graph's (`similarity` for the built-in graph); `specific` when only `lead` is given */
    recall: z.enum(RECALL_MODES).optional(),
    /** The expert who leads with `recall: "specific"`: one of `experts`' names. */
    lead: z.string().optional(),
    /** Input guardrails on the query, output guardrails on the lead's answer (each stage replaces the graph's). @default the graph's (none) */
    guardrails: guardrailsInputSchema.optional(),
    /** Names of registered tools the lead may call beside its colleagues (each call a `consult` step). @default none */
    tools: z.array(z.string().min(1).max(64)).max(32, 'tools may list at most 32 tools').optional(),
  })
  .strict()
  .superRefine((input, context) => {
    if (input.lead !== undefined && input.recall !== undefined && input.recall !== 'specific')
      context.addIssue({
        code: 'custom',
        path: ['lead'],
        message: `lead names the expert who leads with recall 'specific'; drop it or set recall to 'specific' (recall is '${input.recall}')`,
      });
    if (input.lead !== undefined && !input.experts.some((expert) => expert.name === input.lead))
      context.addIssue({
        code: 'custom',
        path: ['lead'],
        message: `lead '${input.lead}' is not one of the experts; known experts: ${expertNames(input.experts)}`,
      });
    const clash = input.tools?.filter((tool) => input.experts.some((expert) => expert.name === tool)) ?? [];
    if (clash.length > 0)
      context.addIssue({
        code: 'custom',
        path: ['tools'],
        message: `tools may not take an expert's name (the lead calls experts by name): ${clash.map((name) => `'${name}'`).join(', ')}`,
      });
  });

export type MultiAgentInput = z.input<typeof multiAgentInputSchema>;
export type Expert = z.infer<typeof expertSchema>;

/**
 * Output of the `multi-agent` graph.
 *
 * ```json
 * { "answer": "…", "lead": "redis", "recall": "embedding",
 *   "experts": [{ "name": "redis", "score": 0.62 }, { "name": "queues", "score": 0.31 }], "consulted": ["queues"] }
 * ```
 */
export interface MultiAgentOutput {
  answer: string;
  /** The expert that led (the most similar one, the first, or the one named). */
  lead: string;
  /**
   * How experts were recalled: `embedding` (EMBED_MODEL) or `lexical` (the fallback without one) by
   * similarity, or `first` / `specific` (the lead chosen by position or by name).
   */
  recall: 'embedding' | 'lexical' | 'first' | 'specific';
  /** The recalled experts, best first, with their similarity scores (null when chosen by position or name). */
  experts: { name: string; score: number | null }[];
  /** Experts the lead consulted, in call order. */
  consulted: string[];
}
