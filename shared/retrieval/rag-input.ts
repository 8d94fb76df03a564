import { z } from 'zod';
import { guardrailsInputSchema } from '../contracts/guardrail-spec.js';
import { ID_PATTERN } from '../contracts/ids.js';

/** The rag-agent's own tools: a run's extra tools may not take their names. */
const RAG_TOOL_NAMES = ['search', 'refine_and_search', 'final_answer'] as const;

/** Longest question accepted (the same bound as a batch question). */
const MAX_RAG_QUERY_CHARS = 20_000;

/**
 * The RAG input, one schema everywhere (docs/reference/job-schema-v1.md): `POST /v1/agent/chat`, each question of a
 * batch, and raw `rag-agent` jobs. Defaults are filled in by parsing, so the worker always sees every field.
 */
export const ragInputSchema = z
  .object({
    /** The user's question. */
    query: z
      .string()
      .trim()
      .min(1, 'query must not be empty')
      .max(MAX_RAG_QUERY_CHARS, `query must be at most ${MAX_RAG_QUERY_CHARS} characters`),
    /** The collection of the caller's documents to search. @default 'default' */
    collection: z
      .string()
      .regex(ID_PATTERN, "collection must be 1-128 characters of letters, digits, '_', '.' or '-'")
      .default('default'),
    /** Search rounds at most (each round may run several searches in parallel). @default 3 */
    max_iterations: z
      .number({ error: 'max_iterations must be an integer from 1 to 10' })
      .int('max_iterations must be an integer from 1 to 10')
      .min(1, 'max_iterations must be an integer from 1 to 10')
      .max(10, 'max_iterations must be an integer from 1 to 10')
      .default(3),
    /** Put numbered markers (`[1]`, `[2]`, …) in the answer text, each naming an entry of `sources`. @default false */
    citations: z.boolean({ error: 'citations must be true or false' }).default(false),
    /**
     * What `sources` lists: `all`, every document page the run retrieved, best relevance first, each with
     * `cited: true|false`; `cited`, only those the answer cites, in citation order. Markers number into it either way.
     * @default AGENTQ_RAG_SOURCES (`all`)
     */
    sources: z.enum(['all', 'cited'], { error: 'sources must be "all" or "cited"' }).optional(),
    /** Passages of each search the model reads, best first, 1-20. @default AGENTQ_RAG_TOP_K (6) */
    top_k: z
      .number({ error: 'top_k must be an integer from 1 to 20' })
      .int('top_k must be an integer from 1 to 20')
      .min(1, 'top_k must be an integer from 1 to 20')
      .max(20, 'top_k must be an integer from 1 to 20')
      .optional(),
    /**
     * Tools of the worker's registry the model may call beside search, refine_and_search and
     * final_answer (with a language model; the extractive answerer calls none). @default the graph's (none)
     */
    tools: z
      .array(
        z
          .string()
          .regex(/^[A-Za-z0-9_-]{1,64}$/, 'tool names are 1-64 characters of letters, digits, "_" or "-"')
          .refine((name) => !(RAG_TOOL_NAMES as readonly string[]).includes(name), {
            message: `tools may not name the rag-agent's own tools (${RAG_TOOL_NAMES.join(', ')})`,
          }),
      )
      .max(32, 'tools may list at most 32 tools')
      .optional(),
    /** Input guardrails on the question and output guardrails on the answer (each stage replaces the graph's). @default the graph's (none) */
    guardrails: guardrailsInputSchema.optional(),
    /**
     * Answer from the tenant's answer cache when the same question was answered before (same collection, graph
     * version, model and options) and every document that answer cites is unchanged; store this run's answer
     * there otherwise (docs/guides/batch-qa.md). Not for a conversation's turns. @default false
     */
    answer_cache: z.boolean({ error: 'answer_cache must be true or false' }).optional(),
  })
  .strict();

/** The RAG input as callers send it (defaults optional). */
export type RagInput = z.input<typeof ragInputSchema>;
/** The RAG input after validation (defaults filled in). */
export type ParsedRagInput = z.output<typeof ragInputSchema>;
