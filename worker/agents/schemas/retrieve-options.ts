import { z } from 'zod';
import { ID_PATTERN } from '../../../shared/contracts/ids.js';

/** Retrieval before an agent's first model call: search the user's input, give the model the passages. */
export const retrieveOptionsSchema = z
  .object({
    /** The collection of the run's tenant to search. @default 'default' */
    collection: z
      .string()
      .regex(ID_PATTERN, "retrieve.collection must be 1-128 characters of letters, digits, '_', '.' or '-'")
      .default('default'),
    /** Passages added to the prompt at most, best first. @default 4 */
    k: z
      .number()
      .int()
      .min(1, 'retrieve.k must be an integer from 1 to 20')
      .max(20, 'retrieve.k must be an integer from 1 to 20')
      .default(4),
    /** Passages scoring below this retrieval score (0-1, relative to the best hit) are left out. @default 0 */
    minScore: z
      .number()
      .min(0, 'retrieve.minScore must be between 0 and 1')
      .max(1, 'retrieve.minScore must be between 0 and 1')
      .default(0),
  })
  .strict();
export type RetrieveOptions = z.output<typeof retrieveOptionsSchema>;

/** A passage an agent was given, as its output lists it (`sources`). */
export interface RetrievedSource {
  /** The id the prompt shows it by (and the model cites it by), e.g. `3fa9c1`. */
  id: string;
  title: string;
  path: string;
  page: number | null;
  /** Retrieval score in 0-1 (see the rag-agent's `score`). */
  score: number;
}
