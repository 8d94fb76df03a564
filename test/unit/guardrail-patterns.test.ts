import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fakeNodeContext, MockLanguageModel, runInProcess } from '../../testing/index.js';
import { generateObject } from '../../worker/agents/llm/generate-object.js';
import { builtInGuardrails } from '../../worker/agents/guardrails/built-in-guardrails.js';
import { defineGuardrail } from '../../worker/agents/guardrails/define-guardrail.js';
import { LinearPatternClass } from '../../worker/agents/guardrails/linear-pattern.js';
import { PII_PATTERNS, redactPii } from '../../worker/agents/guardrails/redact-pii.js';
import { reactAgentGraph } from '../../worker/agents/graphs/react-agent.js';

// No caller-supplied code on a worker's thread: a request's patterns run on RE2 (linear time) or are
// refused naming what RE2 lacks, the built-in patterns are RE2's too, and every check has a time bound.
// Timings are bench/guardrail-patterns.ts's; here linearity is structural (the engine that compiled them).

const run = (llm: MockLanguageModel, input: Record<string, unknown>, services: Record<string, unknown> = {}) =>
  runInProcess(reactAgentGraph, { tools: [], ...input }, { services: { languageModel: llm, ...services } });
const denyList = (options: Record<string, unknown>, stage: 'input' | 'output' = 'input') => ({
  [stage]: [{ name: 'deny_list', options }],
});

describe("deny_list: a request's patterns", () => {
  it.each([
    ['(a)\\1', /backreferences/],
    ['(?<word>a)\\k<word>', /backreferences/],
    ['secret(?=code)', /lookahead/],
    ['(?!x)secret', /lookahead/],
    ['(?<=top )secret', /lookbehind/],
    ['(?<!no )secret', /lookbehind/],
  ])(
    '%s is refused with INVALID_INPUT naming the field and what RE2 lacks, before any model call',
    async (pattern, says) => {
      const llm = new MockLanguageModel();
      const done = await run(llm, { query: 'q', guardrails: denyList({ patterns: ['fine', pattern] }) });
      expect(done.error).toMatchObject({ code: 'INVALID_INPUT' });
      expect(done.error?.message).toMatch(
        /^guardrails\.input\[0\]\.options: invalid options for guardrail 'deny_list'/,
      );
      expect(done.error?.message).toMatch(says);
      expect(done.error?.message).toContain('patterns[1]');
      expect(done.error?.message).toContain('RE2');
      expect(llm.calls).toHaveLength(0);
    },
  );

  it('^(a+)+$ runs on RE2: the ReDoS query passes, a matching one blocks', async () => {
    const llm = new MockLanguageModel({ generate: 'ok' });
    const guardrails = denyList({ patterns: ['^(a+)+$'] });
    // On a backtracking engine this query alone takes over a minute of CPU.
    const done = await run(llm, { query: 'a'.repeat(28) + '!', guardrails });
    expect(done.status).toBe('completed');
    const blocked = await run(llm, { query: 'a'.repeat(40), guardrails });
    expect(blocked.error).toMatchObject({ code: 'GUARDRAIL_BLOCKED', details: { guardrail: 'deny_list' } });
  });

  it('^(a+)+$ on 100,000 characters: no match, and a redact pass over them', () => {
    const denyListGuardrail = builtInGuardrails().find((guardrail) => guardrail.name === 'deny_list')!;
    const check = (text: string, options: Record<string, unknown>) =>
      denyListGuardrail.check(text, {
        stage: 'input',
        options: denyListGuardrail.options.parse(options),
        node: fakeNodeContext({}).context,
        checkDeadline: () => undefined,
      });
    const text = 'a'.repeat(100_000) + '!';
    expect(check(text, { patterns: ['^(a+)+$'] })).toEqual({ action: 'pass' });
    expect(check(text, { patterns: ['(a+)+!'], action: 'redact' })).toMatchObject({ text: '[REDACTED]' });
  });

  it('JavaScript spellings still work (\\u escapes, named groups, case-insensitive); redact replaces every match', async () => {
    const llm = new MockLanguageModel({ generate: 'Café CAFÉ and the Secret-42 and secret-7.' });
    const done = await run(llm, {
      query: 'q',
      guardrails: denyList(
        { patterns: ['caf\\u00e9', '(?<tag>secret)-\\d+'], keywords: ['a.d'], action: 'redact' },
        'output',
      ),
    });
    // 'a.d' is a keyword, so literal: "and" stays.
    expect(done.output).toEqual({ answer: '[REDACTED] [REDACTED] and the [REDACTED] and [REDACTED].' });
  });
});

describe('built-in patterns', () => {
  it('every pattern pii_redaction scans with is compiled by the linear-time engine', () => {
    expect(Object.keys(PII_PATTERNS).sort()).toEqual(['card', 'email', 'phone']);
    for (const pattern of Object.values(PII_PATTERNS)) expect(pattern).toBeInstanceOf(LinearPatternClass);
  });

  // Each is the worst case of one pattern on a backtracking engine (the email one took 6 s there).
  const adversarial: Record<string, string> = {
    'letters without an @': 'a'.repeat(100_000),
    'an @ without a dot': 'a'.repeat(50_000) + '@' + 'b'.repeat(49_999),
    'dotted labels without a top-level domain': 'a@' + 'b.'.repeat(49_999),
    digits: '1'.repeat(100_000),
    'digits and spaces': '1 '.repeat(50_000),
    'digits and dashes': '1-'.repeat(50_000),
    'digits and dots': '1.'.repeat(50_000),
    'plus signs and digits': '+1 '.repeat(33_334),
    'brackets and digits': '(12) '.repeat(20_000),
  };
  it.each(Object.entries(adversarial))('redactPii on 100,000 characters of %s', (_, text) => {
    expect(text.length).toBeGreaterThanOrEqual(100_000);
    const { text: redacted } = redactPii(text);
    expect(redacted.length).toBeGreaterThan(0);
  });

  it('json_schema reads an answer with 100,000 spaces inside', async () => {
    const llm = new MockLanguageModel({ generate: '```json\n{"n":' + ' '.repeat(100_000) + '1}' });
    const schema = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] };
    const done = await run(llm, { query: 'q', guardrails: { output: [{ name: 'json_schema', options: { schema } }] } });
    expect(done.status).toBe('completed');
  });

  it('generateObject reads past an answer of 100,000 line breaks in an unclosed fence (then repairs)', async () => {
    const languageModel = new MockLanguageModel({ generate: ['```\n' + '\n'.repeat(100_000) + '{', '{"n": 1}'] });
    const { context } = fakeNodeContext({ languageModel });
    const result = await generateObject(context, {
      messages: [{ role: 'user', content: 'n?' }],
      schema: z.object({ n: z.number() }),
      name: 'n',
    });
    expect(result).toMatchObject({ object: { n: 1 }, repaired: true });
  });

  it("json_schema refuses a schema's pattern keywords (they would run on the backtracking engine); a property named pattern is fine", async () => {
    const llm = new MockLanguageModel({ generate: '{"pattern": "x"}' });
    const output = (schema: Record<string, unknown>) => ({ output: [{ name: 'json_schema', options: { schema } }] });
    const withPattern = {
      type: 'object',
      properties: { code: { type: 'string', pattern: '^(a+)+$' } },
    };
    const refused = await run(llm, { query: 'q', guardrails: output(withPattern) });
    expect(refused.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(refused.error?.message).toMatch(/'pattern' is not supported/);
    expect(refused.error?.message).toContain('schema.properties.code.pattern');
    const keyed = await run(llm, {
      query: 'q',
      guardrails: output({ type: 'object', patternProperties: { '^x': { type: 'string' } } }),
    });
    expect(keyed.error?.message).toMatch(/'patternProperties' is not supported/);
    const named = await run(llm, {
      query: 'q',
      guardrails: output({ type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] }),
    });
    expect(named.status).toBe('completed');
    expect(llm.calls).toHaveLength(1);
  });
});

describe('a time bound on every check', () => {
  const settings = { agentSettings: { guardrailTimeoutMs: 50 } };

  it('a check that waits past AGENTQ_GUARDRAIL_TIMEOUT_MS fails the step with GUARDRAIL_TIMEOUT, not retried', async () => {
    const never = defineGuardrail({
      name: 'never_answers',
      description: 'Waits for a verdict that never comes',
      check: () => new Promise(() => undefined),
    });
    const llm = new MockLanguageModel();
    const done = await run(
      llm,
      { query: 'q', guardrails: { input: ['never_answers'] } },
      { ...settings, guardrails: [never] },
    );
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({
      code: 'GUARDRAIL_TIMEOUT',
      retryable: false,
      details: { guardrail: 'never_answers', stage: 'input', timeoutMs: 50 },
    });
    expect(llm.calls).toHaveLength(0);
  });

  it('a synchronous check that works in pieces stops at its first checkDeadline() past the time', async () => {
    let pieces = 0;
    const endless = defineGuardrail({
      name: 'endless',
      description: 'Works through pieces without end, checking the deadline between them',
      check: (_, { checkDeadline }) => {
        for (;;) {
          const until = Date.now() + 1;
          while (Date.now() < until) pieces += 0;
          pieces += 1;
          checkDeadline();
        }
      },
    });
    const llm = new MockLanguageModel();
    const done = await run(
      llm,
      { query: 'q', guardrails: { input: ['endless'] } },
      { ...settings, guardrails: [endless] },
    );
    expect(done.error).toMatchObject({ code: 'GUARDRAIL_TIMEOUT', details: { guardrail: 'endless' } });
    expect(pieces).toBeGreaterThan(0);
  });
});
