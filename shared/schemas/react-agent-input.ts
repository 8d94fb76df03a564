import { z } from 'zod';

/**
 * Input of the built-in `react-agent` graph. One schema for the worker and the HTTP API, so a bad
 * request stops at the door (invariant I5).
 */
export const reactAgentInputSchema = z
  .object({
    /** The user's question or task. */
    query: z.string().trim().min(1, 'query must not be empty').max(100_000),
    /** A system prompt replacing the default one. */
    system: z.string().max(100_000).optional(),
    /** Names of registered tools the agent may call; omitted: every tool the worker registers; []: none. */
    tools: z
      .array(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'tool names are 1-64 characters of letters, digits, "_" or "-"'))
      .max(128)
      .optional(),
  })
  .strict();

export type ReactAgentInput = z.infer<typeof reactAgentInputSchema>;

/** Output of the `react-agent` graph. */
export interface ReactAgentOutput {
  answer: string;
}
