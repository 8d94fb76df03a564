import { z } from 'zod';
import { guardrailsInputSchema } from '../../../shared/contracts/guardrail-spec.js';
import { memoryOptionSchema } from './react-agent-input.js';
import { acceptOptionSchema } from '../llm/usable-response.js';

/**
 * Input of the built-in `reflect` graph: a writer answers `task`, a judge reviews each draft against
 * `criteria` and either approves it or sends a critique back, up to `maxIterations` drafts.
 *
 * ```json
 * { "task": "Write a haiku about queues.", "criteria": "5-7-5 syllables; mentions waiting", "maxIterations": 3 }
 * ```
 */
export const reflectInputSchema = z
  .object({
    /** What the writer must produce. */
    task: z.string().trim().min(1, 'task must not be empty').max(100_000),
    /** What the judge checks; omitted: correctness, completeness and clarity. */
    criteria: z.string().trim().min(1).max(20_000).optional(),
    /** Drafts at most (the last one is the answer even if not approved). @default the graph's (3 for the built-in one) */
    maxIterations: z
      .number()
      .int()
      .min(1, 'maxIterations must be at least 1')
      .max(10, 'maxIterations must be at most 10')
      .optional(),
    /** A system prompt replacing the writer's default one. */
    writerSystem: z.string().max(100_000).optional(),
    /** A system prompt replacing the judge's default one. */
    judgeSystem: z.string().max(100_000).optional(),
    /** Model answers without usable output the run takes as its answer instead of failing: `empty`, `length`, `content_filter`, `refusal`. @default none */
    accept: acceptOptionSchema.optional(),
    /** `{ window: N }`: the writer sees its system prompt and the task, then only the last N messages (drafts and critiques); `{ summarizeAt: x }`: summarise past that share of the context window. @default the summariser at AGENTQ_SUMMARIZE_AT */
    memory: memoryOptionSchema.optional(),
    /** Input guardrails on the task, output guardrails on the final draft (each stage replaces the graph's). @default the graph's (none) */
    guardrails: guardrailsInputSchema.optional(),
    /** Names of registered tools the built-in writer may call while drafting (each call a `tool` step). @default none */
    tools: z.array(z.string().min(1).max(64)).max(32, 'tools may list at most 32 tools').optional(),
  })
  .strict();

export type ReflectInput = z.input<typeof reflectInputSchema>;

/** The judge's structured answer about one draft. */
export const reflectVerdictSchema = z
  .object({
    approved: z.boolean().describe('true when the draft fully meets the task and the criteria'),
    critique: z.string().describe('what is wrong or missing and how to fix it; empty when approved'),
  })
  .strict();

export type ReflectVerdict = z.infer<typeof reflectVerdictSchema>;

/**
 * Output of the `reflect` graph.
 *
 * ```json
 * { "answer": "…", "approved": true, "iterations": 2,
 *   "reviews": [{ "iteration": 1, "approved": false, "critique": "…" }, { "iteration": 2, "approved": true, "critique": "" }] }
 * ```
 */
export interface ReflectOutput {
  /** The last draft. */
  answer: string;
  /** Whether the judge approved it (false: the iteration cap was reached first). */
  approved: boolean;
  /** Drafts written. */
  iterations: number;
  /** The judge's verdict on each draft, in order. */
  reviews: (ReflectVerdict & { iteration: number })[];
}
