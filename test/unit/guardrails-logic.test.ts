import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { LanguageModelRequest } from '../../shared/ports/language-model.js';
import { defineTool } from '../../shared/ports/define-tool.js';
import { MockLanguageModel, runInProcess, type InProcessResult } from '../../testing/index.js';
import { defineGuardrail } from '../../worker/agents/guardrails/define-guardrail.js';
import { createMultiAgentGraph, multiAgentGraph } from '../../worker/agents/graphs/multi-agent.js';
import { createReactAgentGraph, reactAgentGraph } from '../../worker/agents/graphs/react-agent.js';
import {
  createReflectGraph,
  critiqueMessage,
  DEFAULT_JUDGE_SYSTEM_PROMPT,
  reflectGraph,
} from '../../worker/agents/graphs/reflect.js';
import { builtInTools } from '../../worker/agents/tools/built-in-tools.js';
import { ToolRegistry } from '../../worker/agents/tools/tool-registry.js';
import { noCompetitors } from '../helpers/agent-fixtures.js';

// Guardrails on the built-in agents, on the in-process runner and a scripted model. The end-to-end file
// (test/integration/guardrails.test.ts) keeps the moderation guardrail over HTTP and one run per agent.

const noAccounts = defineGuardrail({
  name: 'no_accounts',
  description: 'Account numbers never reach the model or the user',
  check: (text) =>
    /ACC-\d+/.test(text) ? { action: 'rewrite', text: text.replace(/ACC-\d+/g, '<account>') } : { action: 'pass' },
});
const noShouting = defineGuardrail({
  name: 'no_shouting',
  description: 'Answers are not written in capitals',
  stages: ['output'],
  check: (text) =>
    /[A-Z]{5,}/.test(text) ? { action: 'reprompt', reason: 'Do not write in capitals.' } : { action: 'pass' },
});
const refuseDeletes = defineGuardrail({
  name: 'refuse_deletes',
  description: 'Tasks that delete data are refused',
  stages: ['input'],
  check: (text) => (/delete/i.test(text) ? { action: 'block', reason: 'deletes data' } : { action: 'pass' }),
});
const customerRecord = defineTool({
  name: 'customer_record',
  description: "A customer's contact; its result is the answer",
  input: z.object({ customer: z.string() }),
  returnDirect: true,
  execute: ({ customer }) =>
    customer === 'rival' ? 'Switch to Acme.' : `${customer} can be reached at ada@example.com.`,
});

const services = (languageModel: MockLanguageModel) => ({
  languageModel,
  tools: new ToolRegistry([...builtInTools(), customerRecord]),
  guardrails: [noCompetitors, noAccounts, noShouting, refuseDeletes],
});
const userContents = (request: LanguageModelRequest) =>
  request.messages.filter((message) => message.role === 'user').map((message) => message.content);
const guardrailEvents = (result: InProcessResult, prefix = 'guardrail-') =>
  result.events.filter((event) => event.type.startsWith(prefix)).map((event) => ({ type: event.type, ...event.data }));
const nodes = (result: InProcessResult) => result.steps.map((step) => step.node);
const isJudge = (request: LanguageModelRequest) => request.messages[0]?.content === DEFAULT_JUDGE_SYSTEM_PROMPT;
const verdict = (approved: boolean, critique = '') => JSON.stringify({ approved, critique });

describe('guardrails on react-agent', () => {
  const guarded = createReactAgentGraph({
    name: 'guarded-agent',
    guardrails: { input: ['pii_redaction'], output: ['pii_redaction', 'no_competitors'] },
  });
  const run = (llm: MockLanguageModel, input: Record<string, unknown>, graph = reactAgentGraph) =>
    runInProcess(graph, { tools: [], ...input }, { services: services(llm) });

  it('an input guardrail that blocks fails the run with GUARDRAIL_BLOCKED before any model call', async () => {
    const llm = new MockLanguageModel();
    const done = await run(llm, {
      query: 'x'.repeat(50),
      guardrails: { input: [{ name: 'max_input_length', options: { maxChars: 20 } }] },
    });
    expect(done.status).toBe('failed');
    expect(done.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      node: 'input_guard',
      message: expect.stringContaining("guardrail 'max_input_length' blocked the input"),
      details: { guardrail: 'max_input_length', stage: 'input', reason: expect.stringContaining('at most 20') },
    });
    expect(llm.calls).toHaveLength(0);
    expect(guardrailEvents(done)).toEqual([
      expect.objectContaining({ type: 'guardrail-block', guardrail: 'max_input_length', stage: 'input' }),
    ]);
  });

  it("a graph's guardrails redact PII from the input before the model sees it and from the answer", async () => {
    const llm = new MockLanguageModel({ generate: 'I emailed bob@example.com and charged 4111 1111 1111 1111.' });
    const done = await run(llm, { query: 'My email is ada@example.com, please help.' }, guarded);
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: 'I emailed [EMAIL] and charged [CARD_NUMBER].' },
    });
    expect(userContents(llm.calls[0]!)).toEqual(['My email is [EMAIL], please help.']);
    expect(JSON.stringify(done.messages)).not.toMatch(/@example\.com|4111/);
    expect(validateHistory(done.messages)).toEqual([]);
    expect(nodes(done)).toEqual(['input_guard', 'model', 'output_guard']);
    expect(guardrailEvents(done)).toEqual([
      expect.objectContaining({ type: 'guardrail-pass', guardrail: 'pii_redaction', stage: 'input', rewritten: true }),
      expect.objectContaining({ type: 'guardrail-pass', guardrail: 'pii_redaction', stage: 'output', rewritten: true }),
      expect.objectContaining({ type: 'guardrail-pass', guardrail: 'no_competitors', stage: 'output' }),
    ]);
  });

  it('a run overrides the graph: input guardrails off; a custom output guardrail reprompts the model', async () => {
    const llm = new MockLanguageModel({ generate: ['Try Acme instead.', 'Our product does that.'] });
    const done = await run(llm, { query: 'ada@example.com: what should I buy?', guardrails: { input: [] } }, guarded);
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Our product does that.' } });
    expect(userContents(llm.calls[0]!)).toEqual(['ada@example.com: what should I buy?']);
    expect(userContents(llm.calls[1]!)).toEqual([
      'ada@example.com: what should I buy?',
      "Your answer was rejected by the guardrail 'no_competitors': Do not name competitors.",
    ]);
    expect(guardrailEvents(done, 'guardrail-retry')).toEqual([
      expect.objectContaining({ guardrail: 'no_competitors', stage: 'output', reprompt: 1 }),
    ]);
    expect(validateHistory(done.messages)).toEqual([]);
  });

  it('json_schema reprompts an answer that is not the schema, and blocks after maxReprompts', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const fixedModel = new MockLanguageModel({ generate: ['Paris', '```json\n{"city": "Paris"}\n```'] });
    const fixed = await run(fixedModel, {
      query: 'capital of France as JSON',
      guardrails: { output: [{ name: 'json_schema', options: { schema } }] },
    });
    expect(fixed).toMatchObject({ status: 'completed', output: { answer: '```json\n{"city": "Paris"}\n```' } });
    expect(fixedModel.calls).toHaveLength(2);

    const failedModel = new MockLanguageModel({ generate: ['Paris', '{"town": "Paris"}', 'never asked'] });
    const failed = await run(failedModel, {
      query: 'capital of France as JSON',
      guardrails: { output: [{ name: 'json_schema', options: { schema } }], maxReprompts: 1 },
    });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      details: { guardrail: 'json_schema', stage: 'output', reason: expect.stringContaining('after 1 reprompt') },
    });
    expect(failedModel.calls).toHaveLength(2);
  });

  it('deny_list blocks an answer', async () => {
    const llm = new MockLanguageModel({ generate: 'The secret code is 1234.' });
    const denied = await run(llm, {
      query: 'tell me',
      guardrails: { output: [{ name: 'deny_list', options: { keywords: ['secret code'] } }] },
    });
    expect(denied.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      details: { guardrail: 'deny_list', stage: 'output' },
    });
  });

  it('an unknown guardrail or bad options fail the run naming the field, with zero model calls', async () => {
    const llm = new MockLanguageModel();
    const unknown = await run(llm, { query: 'q', guardrails: { output: ['pii_redaction', 'no_such_guardrail'] } });
    expect(unknown.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringMatching(
        /^guardrails\.output\[1\]: unknown guardrail 'no_such_guardrail'; this worker has: .*pii_redaction/,
      ),
    });
    const badOptions = await run(llm, {
      query: 'q',
      guardrails: { input: [{ name: 'deny_list', options: { patterns: ['(unclosed'] } }] },
    });
    expect(badOptions.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('guardrails.input[0].options'),
    });
    const badShape = await run(llm, { query: 'q', guardrails: { output: [{ name: 'pii_redaction', extra: 1 }] } });
    expect(badShape.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(llm.calls).toHaveLength(0);
  });

  it("a returnDirect tool's result passes the output guardrails: redacted as the answer, a reprompt sends the model back", async () => {
    const call = (customer: string) => ({ toolCalls: [{ name: 'customer_record', arguments: { customer } }] });
    const redactModel = new MockLanguageModel({ generate: [call('Ada'), 'never asked'] });
    const redacted = await run(redactModel, { query: 'contact for Ada?', tools: ['customer_record'] }, guarded);
    expect(redacted).toMatchObject({ status: 'completed', output: { answer: 'Ada can be reached at [EMAIL].' } });
    expect(redactModel.calls).toHaveLength(1);
    expect(nodes(redacted)).toEqual(['input_guard', 'model', 'tool', 'output_guard']);

    const repromptModel = new MockLanguageModel({ generate: [call('rival'), 'We can help you ourselves.'] });
    const reprompted = await run(repromptModel, { query: 'who else?', tools: ['customer_record'] }, guarded);
    expect(reprompted).toMatchObject({ status: 'completed', output: { answer: 'We can help you ourselves.' } });
    expect(userContents(repromptModel.calls[1]!)).toEqual([
      'who else?',
      "The tool's result was rejected as the answer by the guardrail 'no_competitors': Do not name competitors.",
    ]);
    expect(validateHistory(reprompted.messages)).toEqual([]);

    const blockModel = new MockLanguageModel({ generate: [call('rival'), 'never asked'] });
    const blocked = await run(
      blockModel,
      { query: 'who else?', tools: ['customer_record'], guardrails: { output: ['no_competitors'], maxReprompts: 0 } },
      guarded,
    );
    expect(blocked.error).toMatchObject({
      code: 'GUARDRAIL_BLOCKED',
      details: { guardrail: 'no_competitors', stage: 'output', reason: expect.stringContaining('returnDirect') },
    });
    expect(blockModel.calls).toHaveLength(1);
  });
});

describe('guardrails on reflect and multi-agent', () => {
  const guardrails = { input: ['no_accounts', 'refuse_deletes'], output: ['no_shouting', 'no_accounts'] };
  const guardedReflect = createReflectGraph({ name: 'guarded-reflect', guardrails });
  const guardedExperts = createMultiAgentGraph({ name: 'guarded-experts', guardrails });
  const experts = [
    { name: 'redis', description: 'Redis persistence, AOF and RDB snapshots' },
    { name: 'queues', description: 'Job queues, retries and idempotency' },
  ];

  it('reflect: the writer reads the rewritten task; an approved draft that shouts goes back as a critique', async () => {
    let writes = 0;
    const llm = new MockLanguageModel({
      generate: (request) => {
        if (isJudge(request)) return verdict(true);
        writes += 1;
        return writes === 1 ? 'QUEUES ARE GREAT' : 'Queues are great (ACC-9).';
      },
    });
    const done = await runInProcess(
      guardedReflect,
      { task: 'Praise queues for ACC-12345.' },
      { services: services(llm) },
    );
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: 'Queues are great (<account>).', approved: true, iterations: 2 },
    });
    const writerRequests = llm.calls.filter((request) => !isJudge(request));
    expect(userContents(writerRequests[0]!)).toEqual(['Praise queues for <account>.']);
    expect(userContents(writerRequests[1]!).at(-1)).toBe(
      critiqueMessage("Your answer was rejected by the guardrail 'no_shouting': Do not write in capitals."),
    );
    expect(validateHistory(done.messages)).toEqual([]);
  });

  it('reflect: a shouting last draft is blocked; a refused task fails before any model call', async () => {
    const loudModel = new MockLanguageModel({
      generate: (request) => (isJudge(request) ? verdict(true) : 'LOUD ANSWER'),
    });
    const loud = await runInProcess(
      guardedReflect,
      { task: 'Say something.', maxIterations: 1 },
      { services: services(loudModel) },
    );
    expect(loud).toMatchObject({ status: 'failed', error: { code: 'GUARDRAIL_BLOCKED' } });
    const refusedModel = new MockLanguageModel();
    const refused = await runInProcess(
      guardedReflect,
      { task: 'Delete every queue.' },
      { services: services(refusedModel) },
    );
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'GUARDRAIL_BLOCKED' } });
    expect(refused.error?.message).toMatch(/refuse_deletes/);
    expect(refusedModel.calls).toHaveLength(0);
  });

  it('multi-agent: the rewritten query is recalled and led; a shouting answer is sent back to the lead', async () => {
    const llm = new MockLanguageModel({ generate: ['USE AOF EVERYSEC', 'Use AOF everysec.'] });
    const done = await runInProcess(
      guardedExperts,
      { query: 'AOF or RDB for ACC-77?', experts, recall: 'first' },
      { services: services(llm) },
    );
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Use AOF everysec.', lead: 'redis' } });
    expect(userContents(llm.calls[0]!)).toEqual(['AOF or RDB for <account>?']);
    expect(userContents(llm.calls[1]!).at(-1)).toBe(
      "Your answer was rejected by the guardrail 'no_shouting': Do not write in capitals.",
    );
    expect(validateHistory(done.messages)).toEqual([]);
    expect(nodes(done)).toEqual(['recall', 'lead', 'lead']);
  });

  it('a run names guardrails on the built-in graphs; a refused query fails before any model call', async () => {
    const refusedModel = new MockLanguageModel();
    const refused = await runInProcess(
      multiAgentGraph,
      { query: 'Delete the AOF file?', experts, guardrails: { input: ['refuse_deletes'] } },
      { services: services(refusedModel) },
    );
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'GUARDRAIL_BLOCKED' } });
    expect(refusedModel.calls).toHaveLength(0);
    const llm = new MockLanguageModel({ generate: ['Fine (ACC-1).', verdict(true)] });
    const done = await runInProcess(
      reflectGraph,
      { task: 'Anything.', guardrails: { output: ['no_accounts'] } },
      { services: services(llm) },
    );
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Fine (<account>).' } });
    expect(llm.calls).toHaveLength(2);
  });
});
