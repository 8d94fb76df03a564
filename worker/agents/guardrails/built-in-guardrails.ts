import { z } from 'zod';
import type { Moderator } from '../../../shared/ports/moderator.js';
import { defineGuardrail, type AnyGuardrail } from './define-guardrail.js';
import { redactPii } from './redact-pii.js';

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

const compiles = (pattern: string) => {
  try {
    new RegExp(pattern, 'iu');
    return true;
  } catch {
    return false;
  }
};

/** `deny_list`: case-insensitive keywords and regular expressions; `action` says what a match does. */
const denyListGuardrail = defineGuardrail({
  name: 'deny_list',
  description:
    'Blocks (or reprompts, or redacts) a text containing one of options.keywords or matching one of options.patterns (regular expressions), case-insensitive',
  options: z
    .object({
      keywords: z.array(z.string().min(1).max(200)).max(1000).default([]),
      patterns: z
        .array(z.string().min(1).max(500).refine(compiles, { message: 'not a valid regular expression' }))
        .max(200)
        .default([]),
      /** @default 'block' */
      action: z.enum(['block', 'reprompt', 'redact']).default('block'),
    })
    .strict()
    .refine((options) => options.keywords.length + options.patterns.length > 0, {
      message: 'give at least one keyword or pattern',
    }),
  check: (text, { options }) => {
    const escaped = options.keywords.map((keyword) => keyword.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const expressions = [...escaped, ...options.patterns].map((source) => new RegExp(source, 'giu'));
    const hit = expressions.find((expression) => expression.test(text));
    if (!hit) return { action: 'pass' };
    if (options.action === 'redact') {
      return {
        action: 'rewrite',
        text: expressions.reduce((current, expression) => current.replace(expression, '[REDACTED]'), text),
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
  check: (text) => {
    const { text: redacted, found } = redactPii(text);
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
    .refine((options) => toZod(options.schema) !== undefined, {
      message: 'schema is not a JSON Schema this worker can check',
    }),
  check: (text, { options }) => {
    const schema = toZod(options.schema)!;
    let value: unknown;
    try {
      // Models often fence JSON in a code block.
      value = JSON.parse(text.trim().replace(/^```(?:json)?\s*|\s*```$/g, ''));
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
