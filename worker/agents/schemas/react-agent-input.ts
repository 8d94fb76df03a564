import type { ImageOutput } from '../../../shared/ports/language-model.js';
import { z } from 'zod';
import { guardrailsInputSchema } from '../../../shared/contracts/guardrail-spec.js';
import { retrieveOptionsSchema, type RetrievedSource } from './retrieve-options.js';
import { toolHandlingInputSchema } from '../tools/tool-handling.js';
import { userContentPartsSchema } from '../../../shared/contracts/content-parts.js';
import {
  maxOutputTokensSchema,
  maxToolRoundsSchema,
  modelNameSchema,
  temperatureSchema,
} from '../../../shared/contracts/model-settings.js';
import { missingVariables, templateVariablesSchema } from './message-template.js';
import { acceptOptionSchema } from '../llm/usable-response.js';

const WINDOW_RANGE = 'memory.window must be an integer from 1 to 10000';
const SUMMARIZE_AT_RANGE =
  'memory.summarizeAt must be a number from 0 to 1 (a share of the context window; 0 = never summarise)';

/** What a conversation keeps of a turn for the next one: everything, or only the questions and final answers. */
const MEMORY_KEEP_MODES = ['all', 'answers'] as const;
export type MemoryKeep = (typeof MEMORY_KEEP_MODES)[number];

/**
 * A run's `memory` option (react-agent, reflect, multi-agent), one of:
 * - `{ window: N }`: prompts show only the last N messages (no summarising);
 * - `{ summarizeAt: 0.6 }`: the token-threshold summariser, past this share of the context window
 *   instead of AGENTQ_SUMMARIZE_AT (0: never).
 * Omitted: the summariser at AGENTQ_SUMMARIZE_AT.
 */
export const memoryOptionSchema = z
  .object({
    window: z
      .number({ error: WINDOW_RANGE })
      .int(WINDOW_RANGE)
      .min(1, WINDOW_RANGE)
      .max(10_000, WINDOW_RANGE)
      .optional(),
    summarizeAt: z
      .number({ error: SUMMARIZE_AT_RANGE })
      .min(0, SUMMARIZE_AT_RANGE)
      .max(1, SUMMARIZE_AT_RANGE)
      .optional(),
    /** What a conversation's next turn keeps of this one: everything, or only questions and final answers. @default 'all' */
    keep: z.enum(MEMORY_KEEP_MODES, { error: 'memory.keep must be "all" or "answers"' }).optional(),
  })
  .strict()
  .refine((memory) => memory.window === undefined || memory.summarizeAt === undefined, {
    message:
      'memory takes either window (keep the last N messages) or summarizeAt (summarise past that share of the context window), not both',
  })
  .refine((memory) => memory.window !== undefined || memory.summarizeAt !== undefined || memory.keep !== undefined, {
    message:
      'memory needs window (e.g. {"window": 20}), summarizeAt (e.g. {"summarizeAt": 0.6}) or keep (e.g. {"keep": "answers"}); omit memory for the default summariser',
  });

/** The run's choice, as graphs keep it in their state: a window, or the summarising share (null: the worker's). */
export function memoryChoiceOf(memory: z.infer<typeof memoryOptionSchema> | undefined): {
  messageWindow: number | null;
  summarizeAt: number | null;
} {
  return { messageWindow: memory?.window ?? null, summarizeAt: memory?.summarizeAt ?? null };
}

/**
 * Input of the built-in `react-agent` graph. One schema for the worker and the HTTP API, so a bad
 * request stops at the door, with a message naming the field.
 */
export const reactAgentInputSchema = z
  .object({
    /**
     * The user's question or task: text, or content parts in OpenAI's format (text and `image_url` parts,
     * passed through to the model; image URLs http(s) or data:).
     */
    query: z.union([z.string().trim().min(1, 'query must not be empty').max(100_000), userContentPartsSchema], {
      error: 'query must be a non-empty string or an array of content parts',
    }),
    /** Values of the `{{name}}` variables in `query` and `system` (templates); without it, braces are plain text. */
    variables: templateVariablesSchema.optional(),
    /** A system prompt replacing the default one. */
    system: z.string().max(100_000).optional(),
    /** Names of registered tools the agent may call; omitted: every tool the worker registers; []: none. */
    tools: z
      .array(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'tool names are 1-64 characters of letters, digits, "_" or "-"'))
      .max(128)
      .optional(),
    /** Model responses with tool calls before the model is asked for a final answer without tools. @default AGENTQ_MAX_TOOL_ROUNDS */
    maxToolRounds: maxToolRoundsSchema.optional(),
    /** Another model on the worker's endpoint for this run. @default LLM_MODEL */
    model: modelNameSchema.optional(),
    /** Sampling temperature, 0-2. @default the provider's */
    temperature: temperatureSchema.optional(),
    /** `max_tokens` of each model request. @default AGENTQ_LLM_MAX_TOKENS (else the provider's limit) */
    maxOutputTokens: maxOutputTokensSchema.optional(),
    /** Model answers without usable output the run takes as its answer instead of failing: `empty`, `length`, `content_filter`, `refusal`. @default none */
    accept: acceptOptionSchema.optional(),
    /** How unknown tools, bad arguments and failing tools are handled (overrides the graph's). */
    toolHandling: toolHandlingInputSchema.optional(),
    /** Guardrails replacing the graph's, per stage (worker/agents/guardrails). */
    guardrails: guardrailsInputSchema.optional(),
    /** Search the tenant's documents for the query first and give the model the passages (with ids to cite). */
    retrieve: retrieveOptionsSchema.optional(),
    /** `{ window: N }`: prompts show only the last N messages (no summarising then); `{ summarizeAt: x }`: summarise past that share of the context window. @default the graph's, else the summariser at AGENTQ_SUMMARIZE_AT */
    memory: memoryOptionSchema.optional(),
  })
  .strict()
  .superRefine((input, context) => {
    // A template variable with no value stops at the door, named.
    if (!input.variables) return;
    const texts: [string, string][] = [
      ...(input.system === undefined ? [] : [['system', input.system] as [string, string]]),
      ...(typeof input.query === 'string'
        ? [['query', input.query] as [string, string]]
        : input.query.flatMap((part, index) =>
            part.type === 'text' ? [[`query.${index}.text`, part.text] as [string, string]] : [],
          )),
    ];
    for (const [field, text] of texts) {
      for (const name of missingVariables(text, input.variables))
        context.addIssue({
          code: 'custom',
          path: ['variables', name],
          message: `${field} uses {{${name}}} but variables has no value for it`,
        });
    }
  });

export type ReactAgentInput = z.infer<typeof reactAgentInputSchema>;

/** Output of the `react-agent` graph. */
export interface ReactAgentOutput {
  answer: string;
  /** With `retrieve`: the passages the model was given. */
  sources?: RetrievedSource[];
  /** Images the model returned during the run (models that make images), in order. @default absent: none */
  images?: ImageOutput[];
}
