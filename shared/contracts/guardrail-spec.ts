import { z } from 'zod';

const guardrailName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'guardrail names are 1-64 characters of letters, digits, "_" or "-"');

/** One guardrail as a graph or run names it: its name, or `{ name, options }`. */
const guardrailSpecSchema = z.union([
  guardrailName,
  z.object({ name: guardrailName, options: z.record(z.string(), z.unknown()).optional() }).strict(),
]);
export type GuardrailSpec = z.infer<typeof guardrailSpecSchema>;

/**
 * A graph's guardrails, or a run's override of them (in the run's input): each stage given replaces
 * the graph's list for that stage; `[]` switches a stage off.
 */
export const guardrailsInputSchema = z
  .object({
    /** Checked in order on the user's input, before the first model call. */
    input: z.array(guardrailSpecSchema).max(32).optional(),
    /** Checked in order on each model answer (not on tool calls). */
    output: z.array(guardrailSpecSchema).max(32).optional(),
    /** Reprompts allowed per run before an output guardrail's `reprompt` blocks instead. @default 2 */
    maxReprompts: z.number().int().min(0).max(10).optional(),
  })
  .strict();
export type GuardrailsInput = z.infer<typeof guardrailsInputSchema>;

/** A graph's guardrails with a run's overrides applied. */
export interface GuardrailPlan {
  input: GuardrailSpec[];
  output: GuardrailSpec[];
  maxReprompts: number;
}

const DEFAULT_MAX_REPROMPTS = 2;

export function planGuardrails(graph: GuardrailsInput = {}, run: GuardrailsInput = {}): GuardrailPlan {
  return {
    input: run.input ?? graph.input ?? [],
    output: run.output ?? graph.output ?? [],
    maxReprompts: run.maxReprompts ?? graph.maxReprompts ?? DEFAULT_MAX_REPROMPTS,
  };
}

export function specName(spec: GuardrailSpec): string {
  return typeof spec === 'string' ? spec : spec.name;
}
