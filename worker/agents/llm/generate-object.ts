import type { z } from 'zod';
import { AgentqError } from '../../../shared/contracts/errors.js';
import type { NodeContext } from '../../../shared/graph/node-context.js';
import type { Message } from '../../../shared/contracts/run-record.js';
import { callLanguageModel, type ModelCall } from './call-language-model.js';
import { strictJsonSchema } from './strict-json-schema.js';
import { compileLinear } from '../guardrails/linear-pattern.js';

export interface GenerateObjectOptions<T> {
  /** The conversation asking for the object (system prompt first). */
  messages: Message[];
  /** What the answer must be: a `z.object(...)`; use `.nullable()`, not `.optional()` (strict mode). */
  schema: z.ZodType<T>;
  /** The schema's name as the provider sees it: 1-64 letters, digits, `_` or `-`. @default 'result' */
  name?: string;
  /** Memo key prefix of the calls within the step (`<key>` and `<key>.repair`). @default 'object' */
  key?: string;
  /** @default the configured AGENTQ_LLM_MAX_TOKENS */
  maxTokens?: number;
  /** @default the provider's default */
  temperature?: number;
}

export interface GeneratedObject<T> {
  /** The validated object. */
  object: T;
  /** True when the first answer was invalid and the repair round fixed it. */
  repaired: boolean;
  /** The model call whose answer became `object`. */
  call: ModelCall;
}

/** Said to the model after an answer that did not match the schema. */
export function repairRequest(problem: string): string {
  return `Your answer did not match the required JSON schema: ${problem}. Answer again with only a JSON object that matches the schema exactly.`;
}

/**
 * Asks the model for an object matching a zod schema (`response_format` json_schema, strict) and
 * validates the answer. An invalid answer (not JSON, wrong shape, refused, cut off) gets one repair
 * round: the model sees its answer and the validation error and tries again. A second invalid answer
 * fails the step with a non-retryable `PROVIDER_ERROR` carrying the validation message — both answers
 * are memoised, so retrying the step would only replay them.
 *
 * ```ts
 * const { object } = await generateObject(context, {
 *   messages: [{ role: 'user', content: `Judge this draft: ${draft}` }],
 *   schema: z.object({ approved: z.boolean(), critique: z.string() }),
 *   name: 'verdict',
 * });
 * ```
 */
export async function generateObject<T>(
  context: NodeContext,
  options: GenerateObjectOptions<T>,
): Promise<GeneratedObject<T>> {
  const { messages, schema, name = 'result', key = 'object', maxTokens, temperature } = options;
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
    throw new AgentqError(
      'INVALID_INPUT',
      `structured output name '${name}' must be 1-64 characters of letters, digits, '_' or '-'`,
    );
  }
  const request = {
    responseFormat: { type: 'json_schema' as const, name, schema: strictJsonSchema(schema, name), strict: true },
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(temperature === undefined ? {} : { temperature }),
  };
  const first = await callLanguageModel(context, { ...request, messages }, { key });
  const firstResult = parseAnswer(first, schema);
  if (firstResult.ok) return { object: firstResult.value, repaired: false, call: first };

  const repairMessages: Message[] = [
    ...messages,
    { role: 'assistant', content: first.message.content ?? '' },
    { role: 'user', content: repairRequest(firstResult.problem) },
  ];
  const second = await callLanguageModel(context, { ...request, messages: repairMessages }, { key: `${key}.repair` });
  const secondResult = parseAnswer(second, schema);
  if (secondResult.ok) return { object: secondResult.value, repaired: true, call: second };
  throw new AgentqError(
    'PROVIDER_ERROR',
    `the model's answer did not match the structured output schema '${name}' after one repair round: ${secondResult.problem}`,
    {
      details: {
        schema: name,
        firstProblem: firstResult.problem,
        problem: secondResult.problem,
        answer: (second.message.content ?? '').slice(0, 500),
      },
    },
  );
}

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

function parseAnswer<T>(call: ModelCall, schema: z.ZodType<T>): Parsed<T> {
  const content = call.message.content;
  if (content === null || content.trim() === '') return { ok: false, problem: 'the answer was empty (no JSON object)' };
  if (call.finishReason === 'length')
    return { ok: false, problem: 'the answer was cut off at the token limit before the JSON object ended' };
  let json: unknown;
  try {
    json = JSON.parse(stripCodeFence(content));
  } catch (error) {
    return { ok: false, problem: `the answer is not valid JSON (${(error as Error).message})` };
  }
  const result = schema.safeParse(json);
  if (result.success) return { ok: true, value: result.data };
  const problem = result.error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
  return { ok: false, problem };
}

// On RE2 (linear time): on JavaScript's engine this takes seconds on an answer of many line breaks.
const CODE_FENCE = compileLinear('^\\s*```(?:json)?\\s*\\n([\\s\\S]*?)\\n?```\\s*$');

/** Some servers without strict mode wrap JSON in a Markdown code fence. */
function stripCodeFence(text: string): string {
  const match = CODE_FENCE.exec(text) as string[] | null;
  return match ? match[1]! : text;
}
