import { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';

/** Where a guardrail runs: on the user's input before the first model call, or on each model answer. */
export type GuardrailStage = 'input' | 'output';

/**
 * What a guardrail decided about one text:
 * - `pass`: go on unchanged;
 * - `block`: the run fails with GUARDRAIL_BLOCKED naming the guardrail and `reason` (no further model call);
 * - `rewrite`: go on with `text` instead (e.g. redacted);
 * - `reprompt` (output only; on input it blocks): the model is sent `reason` and asked again, at most
 *   the graph's `maxReprompts` times, then the run is blocked.
 */
export type GuardrailResult =
  | { action: 'pass' }
  | { action: 'block'; reason: string }
  | { action: 'rewrite'; text: string; reason?: string }
  | { action: 'reprompt'; reason: string };

interface GuardrailCheckContext<Options> {
  stage: GuardrailStage;
  /** The guardrail's options from the graph or run, validated by its `options` schema. */
  options: Options;
  /** The step's context: memoise paid checks with `node.memo`, stop on `node.abortSignal`. */
  node: NodeContext;
  /**
   * Throws GUARDRAIL_TIMEOUT once the check has used its time (AGENTQ_GUARDRAIL_TIMEOUT_MS). A check
   * that works through a long text in pieces calls it between them: nothing can stop a synchronous
   * check in the middle of a piece, so that is where the time bound holds.
   */
  checkDeadline(): void;
}

export interface GuardrailDefinition<Options> {
  /** What graphs and runs call it: 1-64 letters, digits, `_` or `-`. */
  name: string;
  /** What it checks (shown in errors listing the guardrails a worker has). */
  description: string;
  /** Its options (a graph's or run's `{ name, options }`). @default no options (`{}`) */
  options?: z.ZodType<Options>;
  /** Stages it may run at. @default both */
  stages?: readonly GuardrailStage[];
  check(text: string, context: GuardrailCheckContext<Options>): GuardrailResult | Promise<GuardrailResult>;
}

export interface Guardrail<Options = unknown> extends Required<
  Pick<GuardrailDefinition<Options>, 'name' | 'description' | 'stages'>
> {
  readonly options: z.ZodType<Options>;
  check(text: string, context: GuardrailCheckContext<Options>): GuardrailResult | Promise<GuardrailResult>;
}

/** A guardrail of any options type (registries hold many). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry holds guardrails of every options type
export type AnyGuardrail = Guardrail<any>;

const NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Defines a custom guardrail, registered like a tool (`startWorker({ services: { guardrails: new
 * GuardrailRegistry([mine]) } })`, built-ins included) and named in a graph's or run's `guardrails`.
 *
 * ```ts
 * const noCompetitors = defineGuardrail({
 *   name: 'no_competitors',
 *   description: 'Answers never name a competitor',
 *   stages: ['output'],
 *   check: (text) => (/acme/i.test(text) ? { action: 'reprompt', reason: 'Do not name competitors.' } : { action: 'pass' }),
 * });
 * ```
 */
export function defineGuardrail<Options = Record<string, never>>(
  definition: GuardrailDefinition<Options>,
): Guardrail<Options> {
  if (!NAME_PATTERN.test(definition.name)) {
    throw new AgentqError(
      'INVALID_INPUT',
      `guardrail name '${definition.name}' must be 1-64 characters of letters, digits, '_' or '-'`,
    );
  }
  return Object.freeze({
    name: definition.name,
    description: definition.description,
    stages: definition.stages ?? (['input', 'output'] as const),
    options: definition.options ?? (z.object({}).strict() as unknown as z.ZodType<Options>),
    check: definition.check,
  });
}
