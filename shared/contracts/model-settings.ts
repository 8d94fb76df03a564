import { z } from 'zod';
import { imagePartSchema, MAX_CONTENT_PARTS } from './content-parts.js';

/** Another model on the worker's endpoint for a run. */
export const modelNameSchema = z
  .string()
  .regex(
    /^[A-Za-z0-9_.:/@-]{1,200}$/,
    'model must be 1-200 characters of letters, digits, "_", ".", ":", "/", "@" or "-"',
  );

/** Sampling temperature, 0-2. */
export const temperatureSchema = z
  .number()
  .min(0, 'temperature must be between 0 and 2')
  .max(2, 'temperature must be between 0 and 2');

/** `max_tokens` of each model request. */
export const maxOutputTokensSchema = z.number().int().min(1).max(1_000_000);

/** Model responses with tool calls before the model is asked for a final answer without tools. */
export const maxToolRoundsSchema = z.number().int().min(1).max(1000);

/**
 * State keys in which the built-in agents keep what a run's input gave the model (its model settings,
 * its query's images), with the schemas of the input fields they come from. A fork's `set` replaces
 * state, not input, and the fork's first step calls the model with it: a patch of one of these keys is
 * checked as the input was (a `file:` image URL or `temperature: 7` is refused before the fork exists).
 * Settings the schema does not name are left to the graph, as its other state keys are.
 */
export const MODEL_STATE_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  settings: z
    .object({
      model: modelNameSchema.optional(),
      temperature: temperatureSchema.optional(),
      maxOutputTokens: maxOutputTokensSchema.optional(),
      maxToolRounds: maxToolRoundsSchema.optional(),
    })
    .loose(),
  queryImages: z.array(imagePartSchema).max(MAX_CONTENT_PARTS, `at most ${MAX_CONTENT_PARTS} images`),
};
