import { z } from 'zod';
import type { Moderator } from '../../../shared/ports/moderator.js';
import { defineGuardrail, type AnyGuardrail } from './define-guardrail.js';
import { redactPii } from './redact-pii.js';
import { callerPatternProblem, compileCallerPattern, literalPattern, replaceMatches } from './linear-pattern.js';

/** `max_input_length`: blocks a text longer than `maxChars` (before any model call when at input). */
const maxInputLengthGuardrail = defineGuardrail({
  name: 'max_input_length',
  description: 'Blocks a text longer than options.maxChars (default 4000)',
  options: z.object({ maxChars: z.number().int().min(1).max(10_000_000).default(4000) }).strict(),
  check: (text, { options }) =>
    text.length > options.maxChars
      ? {
          action: 'block',
          reason: `the text is ${text.length} characters long; at most ${options.maxChars} are allowed`,
        }
      : { action: 'pass' },
});

// A request's pattern runs on RE2 (linear-pattern.ts) or is refused, naming what RE2 lacks.
const callerPattern = z
  .string()
  .min(1)
  .max(500)
  .superRefine((source, context) => {
    const problem = callerPatternProblem(source);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });

/** A keyword as the reasons show it: the regular expression that matches it literally. */
const escapeKeyword = (keyword: string) => keyword.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * `deny_list`: case-insensitive keywords and regular expressions (RE2 syntax: linear-time matching, so
 * no backreferences or lookaround); `action` says what a match does.
 */
const denyListGuardrail = defineGuardrail({
  name: 'deny_list',
  description:
    'Blocks (or reprompts, or redacts) a text containing one of options.keywords or matching one of options.patterns (regular expressions), case-insensitive',
  options: z
    .object({
      keywords: z.array(z.string().min(1).max(200)).max(1000).default([]),
      patterns: z.array(callerPattern).max(200).default([]),
      /** @default 'block' */
      action: z.enum(['block', 'reprompt', 'redact']).default('block'),
    })
    .strict()
    .refine((options) => options.keywords.length + options.patterns.length > 0, {
      message: 'give at least one keyword or pattern',
    }),
  check: (text, { options, checkDeadline }) => {
    const terms = [
      ...options.keywords.map((keyword) => ({ source: escapeKeyword(keyword), pattern: literalPattern(keyword) })),
      ...options.patterns.map((source) => ({ source, pattern: compileCallerPattern(source) })),
    ];
    const hit = terms.find(({ pattern }) => {
      checkDeadline();
      return pattern.test(text);
    });
    if (!hit) return { action: 'pass' };
    if (options.action === 'redact') {
      return {
        action: 'rewrite',
        text: terms.reduce(
          (current, { pattern }) => replaceMatches(pattern, current, () => '[REDACTED]', { between: checkDeadline }),
          text,
        ),
        reason: 'denied terms redacted',
      };
    }
    const reason = `the text contains a denied term (matching /${hit.source}/)`;
    return options.action === 'reprompt'
      ? { action: 'reprompt', reason: `Your answer ${reason.slice(9)}; answer again without it.` }
      : { action: 'block', reason };
  },
});

/** `pii_redaction`: replaces emails, phone numbers and Luhn-valid card numbers with markers. */
const piiRedactionGuardrail = defineGuardrail({
  name: 'pii_redaction',
  description:
    'Replaces email addresses, phone numbers and payment card numbers (Luhn-checked) with [EMAIL], [PHONE], [CARD_NUMBER]',
  check: (text, { checkDeadline }) => {
    const { text: redacted, found } = redactPii(text, checkDeadline);
    return found.length === 0
      ? { action: 'pass' }
      : { action: 'rewrite', text: redacted, reason: `redacted: ${found.join(', ')}` };
  },
});

/** `json_schema`: the text must be JSON matching options.schema; an answer that is not is sent back to the model. */
const jsonSchemaGuardrail = defineGuardrail({
  name: 'json_schema',
  description:
    'The text must be JSON matching options.schema (a JSON Schema); on output the model is asked again with the errors',
  stages: ['output'],
  options: z
    .object({ schema: z.record(z.string(), z.unknown()) })
    .strict()
    .superRefine(({ schema }, context) => {
      const keyword = regexKeywordIn(schema);
      if (keyword) {
        context.addIssue({
          code: 'custom',
          path: ['schema', ...keyword.path],
          message: `'${keyword.name}' is not supported: a schema's patterns would run on JavaScript's backtracking engine, where one pattern can stall the worker (check patterns with deny_list, which runs them on RE2)`,
        });
      } else if (toZod(schema) === undefined) {
        context.addIssue({ code: 'custom', message: 'schema is not a JSON Schema this worker can check' });
      }
    }),
  check: (text, { options }) => {
    const schema = toZod(options.schema)!;
    let value: unknown;
    try {
      value = JSON.parse(unfence(text));
    } catch (error) {
      return {
        action: 'reprompt',
        reason: `Your answer is not valid JSON (${(error as Error).message}). Answer with only a JSON value matching this schema: ${JSON.stringify(options.schema)}`,
      };
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return { action: 'pass' };
    return {
      action: 'reprompt',
      reason: `Your answer does not match the required JSON Schema:\n${z.prettifyError(parsed.error)}\nAnswer with only a JSON value matching: ${JSON.stringify(options.schema)}`,
    };
  },
});

/**
 * The text inside a code fence (models often fence JSON), by hand: the regular expression it replaces,
 * /\s*```$/, takes seconds on a long run of spaces.
 */
function unfence(text: string): string {
  let body = text.trim();
  if (body.startsWith('```')) body = body.slice(body.startsWith('```json') ? 7 : 3);
  if (body.endsWith('```')) body = body.slice(0, -3);
  return body;
}

// Keywords whose values are schemas by name (a property may be called "pattern"), and those holding data.
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions', 'dependentSchemas']);
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);

/** The first `pattern` or `patternProperties` keyword in a JSON Schema, with its path. */
function regexKeywordIn(schema: unknown, path: string[] = []): { name: string; path: string[] } | undefined {
  if (Array.isArray(schema)) {
    for (const [index, item] of schema.entries()) {
      const found = regexKeywordIn(item, [...path, String(index)]);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof schema !== 'object' || schema === null) return undefined;
  for (const [key, value] of Object.entries(schema)) {
    if ((key === 'pattern' && typeof value === 'string') || key === 'patternProperties')
      return { name: key, path: [...path, key] };
    if (DATA_KEYWORDS.has(key)) continue;
    if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null) {
      for (const [name, member] of Object.entries(value)) {
        const found = regexKeywordIn(member, [...path, key, name]);
        if (found) return found;
      }
      continue;
    }
    const found = regexKeywordIn(value, [...path, key]);
    if (found) return found;
  }
  return undefined;
}

function toZod(schema: Record<string, unknown>): z.ZodType | undefined {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return undefined;
  }
}

/** `moderation`: an OpenAI-compatible `/v1/moderations` endpoint (MODERATION_MODEL) flags the text → block. */
function moderationGuardrail(moderator: Moderator): AnyGuardrail {
  return defineGuardrail({
    name: 'moderation',
    description: `Blocks a text the moderation model (${moderator.modelId}) flags`,
    check: async (text, { node, stage }) => {
      // Paid: saved with the step, so a retried step does not ask again.
      const verdict = await node.memo(`guardrail:moderation:${stage}`, () =>
        moderator.moderate(text, { abortSignal: node.abortSignal }),
      );
      return verdict.flagged
        ? { action: 'block', reason: `flagged by moderation (${verdict.categories.join(', ') || 'no category given'})` }
        : { action: 'pass' };
    },
  });
}

/** The guardrails every worker offers; `moderation` only with a moderator (MODERATION_MODEL). */
export function builtInGuardrails({ moderator }: { moderator?: Moderator | undefined } = {}): AnyGuardrail[] {
  return [
    maxInputLengthGuardrail,
    denyListGuardrail,
    piiRedactionGuardrail,
    jsonSchemaGuardrail,
    ...(moderator ? [moderationGuardrail(moderator)] : []),
  ];
}
