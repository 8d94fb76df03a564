import { Writable } from 'node:stream';
import { pino } from 'pino';
import { z } from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { defineTool } from '../../shared/ports/define-tool.js';
import { defineGuardrail } from '../../worker/agents/guardrails/define-guardrail.js';
import { createRagAgentGraph } from '../../worker/agents/rag/rag-agent.js';
import type { ScriptedChatRequest, ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { ingestFolder, RAG_DOCS, startRagTestEnv, writeDocs, type RagTestEnv } from '../helpers/rag-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { wire, wired } from '../helpers/agent-fixtures.js';

/** Rewrites a ticket number out of any text (input or output). */
const noTickets = defineGuardrail({
  name: 'no_tickets',
  description: 'Ticket numbers never reach the model or the user',
  check: (text) =>
    /TICKET-\d+/.test(text)
      ? { action: 'rewrite', text: text.replace(/TICKET-\d+/g, '[ticket]'), reason: 'ticket number' }
      : { action: 'pass' },
});
/** Sends an apologetic answer back to the model. */
const noApologies = defineGuardrail({
  name: 'no_apologies',
  description: 'Answers do not apologise',
  stages: ['output'],
  check: (text) => (/sorry/i.test(text) ? { action: 'reprompt', reason: 'Do not apologise.' } : { action: 'pass' }),
});
/** Blocks any question about passwords. */
const noPasswords = defineGuardrail({
  name: 'no_passwords',
  description: 'Questions about passwords are refused',
  stages: ['input'],
  check: (text) => (/password/i.test(text) ? { action: 'block', reason: 'asks for a password' } : { action: 'pass' }),
});
let opened = 0;
const openingHours = defineTool({
  name: 'opening_hours',
  description: "A monument's opening hours today",
  input: z.object({ monument: z.string() }),
  execute: ({ monument }) => {
    opened += 1;
    return `${monument} is open 9:00-18:00 today.`;
  },
});

/** The worker's log lines at debug level, parsed. */
const logLines: Record<string, unknown>[] = [];
const logger = pino(
  { level: 'debug' },
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  }),
);

const toolNames = (request: ScriptedChatRequest) =>
  (request.body.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);
const userContents = (request: ScriptedChatRequest) =>
  (request.body.messages as unknown as Message[]).filter((message) => message.role === 'user').map((m) => m.content);

/** rag-agent's guardrails and extra tools, through the real openai SDK against the scripted server. */
describe('rag-agent: guardrails and extra tools', () => {
  const data = tempDirectory('agentq-rag-guard-');
  let rag: RagTestEnv<TestEnv>;
  let server: ScriptedOpenAIServer;
  let env: TestEnv;

  beforeAll(async () => {
    rag = await startRagTestEnv(
      (options) =>
        startTestEnv({
          ...options,
          services: { ...options.services, guardrails: [noTickets, noApologies, noPasswords] },
          tools: [openingHours, wire],
          logger,
          graphs: [
            createRagAgentGraph({
              name: 'guarded-rag',
              guardrails: { input: ['no_tickets', 'no_passwords'], output: ['no_apologies', 'no_tickets'] },
            }),
          ],
        }),
      data.path,
      // Content in the debug lines below needs it (as in spans); without it they give lengths only.
      { model: {}, env: { AGENTQ_TRACE_CONTENT: 'true' } },
    );
    ({ env } = rag);
    server = rag.server!;
    await ingestFolder(rag.ingest, writeDocs(data.path, 'paris', RAG_DOCS), { collection: 'paris' });
  });
  afterAll(async () => {
    await rag.close();
    data.remove();
  });
  beforeEach(() => server.reset());

  const run = async (input: Record<string, unknown>, graph = 'guarded-rag') => {
    const queued = await env.client.enqueue({ graph, input: { collection: 'paris', ...input } });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('the input rewrite is what the model reads; an apologetic answer is sent back once, the second kept', async () => {
    server.setScript([
      { toolCalls: [{ name: 'search', arguments: { query: 'Eiffel Tower' } }] },
      { toolCalls: [{ name: 'final_answer', arguments: { answer: 'Sorry, it is in Paris.', citations: [] } }] },
      { toolCalls: [{ name: 'final_answer', arguments: { answer: 'It is in Paris (TICKET-7).', citations: [] } }] },
    ]);
    const done = await run({ query: 'Where is the Eiffel Tower? (TICKET-42)' });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'It is in Paris ([ticket]).' } });
    const requests = server.chatRequests();
    expect(requests).toHaveLength(3);
    expect(userContents(requests[0]!)).toEqual(['Where is the Eiffel Tower? ([ticket])']);
    expect(userContents(requests[2]!).at(-1)).toBe(
      "Your answer was rejected by the guardrail 'no_apologies': Do not apologise.",
    );
    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    const events = (await env.client.store.eventLog.events(done.id)).map((event) => event.type);
    expect(events).toContain('guardrail-retry');
  });

  it('a run past maxReprompts is blocked; a blocking input guardrail fails the run before any model call', async () => {
    server.setScript(() => ({ toolCalls: [{ name: 'final_answer', arguments: { answer: 'Sorry.', citations: [] } }] }));
    const stubborn = await run({ query: 'Where is the Louvre?', guardrails: { maxReprompts: 1 } });
    expect(stubborn).toMatchObject({ status: 'failed', error: { code: 'GUARDRAIL_BLOCKED' } });
    expect(stubborn.error?.message).toMatch(/guardrail 'no_apologies' blocked the model's answer: Do not apologise/);
    server.reset();
    const refused = await run({ query: 'What is the admin password?' });
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'GUARDRAIL_BLOCKED' } });
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('a run may name guardrails on the built-in rag-agent; an unknown one fails before any model call', async () => {
    server.setScript([
      { toolCalls: [{ name: 'search', arguments: { query: 'Eiffel' } }] },
      { toolCalls: [{ name: 'final_answer', arguments: { answer: 'TICKET-1 Paris.', citations: [] } }] },
    ]);
    const done = await run({ query: 'Where?', guardrails: { output: ['no_tickets'] } }, 'rag-agent');
    expect(done).toMatchObject({ status: 'completed', output: { answer: '[ticket] Paris.' } });
    server.reset();
    const unknown = await run({ query: 'Where?', guardrails: { input: ['nope'] } }, 'rag-agent');
    expect(unknown.status).toBe('failed');
    expect(unknown.error?.message).toMatch(/nope/);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it("extra tools are offered beside the three; a turn's search and tool call run as one superstep", async () => {
    opened = 0;
    server.setScript([
      {
        toolCalls: [
          { name: 'search', arguments: { query: 'Louvre' } },
          { name: 'opening_hours', arguments: { monument: 'Louvre' } },
        ],
      },
      { toolCalls: [{ name: 'final_answer', arguments: { answer: 'Open 9:00-18:00, in Paris.', citations: [] } }] },
    ]);
    const done = await run({ query: 'When can I visit the Louvre?', tools: ['opening_hours'] }, 'rag-agent');
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Open 9:00-18:00, in Paris.' } });
    expect(toolNames(server.chatRequests()[0]!)).toEqual([
      'search',
      'refine_and_search',
      'final_answer',
      'opening_hours',
    ]);
    expect(opened).toBe(1);
    const steps = await env.client.steps(done.id);
    expect(steps.map((step) => step.node)).toEqual(['model', 'search', 'tool', 'model']);
    expect(steps[1]!.superstep).toBe(steps[2]!.superstep);
    const history = await env.client.messages(done.id);
    expect(
      history.some((message) => message.role === 'tool' && message.content === 'Louvre is open 9:00-18:00 today.'),
    ).toBe(true);
    expect(validateHistory(history)).toEqual([]);
    // At debug level: a line per iteration (with the calls' arguments, cut; AGENTQ_TRACE_CONTENT), per
    // search, and at the answer.
    const lines = logLines.filter((line) => line.runId === done.id);
    expect(lines.filter((line) => line.msg === 'rag-agent: iteration')).toHaveLength(2);
    expect(lines.find((line) => line.msg === 'rag-agent: iteration')).toMatchObject({
      mode: 'model',
      searches: [{ query: 'Louvre' }],
      tools: [{ tool: 'opening_hours', arguments: '{"monument":"Louvre"}' }],
    });
    expect(lines.find((line) => line.msg === 'rag-agent: tool call')).toMatchObject({
      tool: 'search',
      arguments: '{"query":"Louvre"}',
    });
    expect(lines.find((line) => line.msg === 'rag-agent: answer')).toMatchObject({ mode: 'model', searches: 1 });
  });

  it("tools may not take the rag-agent's own names, and an unknown tool fails the run before any model call", async () => {
    const clash = await run({ query: 'x', tools: ['search'] }, 'rag-agent');
    expect(clash).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(clash.error?.message).toMatch(/tools may not name the rag-agent's own tools/);
    const unknown = await run({ query: 'x', tools: ['teleport'] }, 'rag-agent');
    expect(unknown.status).toBe('failed');
    expect(unknown.error?.message).toMatch(/teleport/);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('an extra tool that needs approval parks the run (waiting, nothing run) until a person approves; then it runs once', async () => {
    wired.length = 0;
    server.setScript([
      { toolCalls: [{ name: 'wire', arguments: { amount: 999_999 } }] },
      { toolCalls: [{ name: 'final_answer', arguments: { answer: 'Wired.', citations: [] } }] },
    ]);
    // One round: the answer after the tool call needs no search first.
    const queued = await env.client.enqueue({
      graph: 'rag-agent',
      input: { collection: 'paris', query: 'Wire 999999', max_iterations: 1, tools: ['wire'] },
    });
    const waiting = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(waiting).toMatchObject({
      status: 'waiting',
      interrupt: { node: 'tool', request: { type: 'tool-approval', tool: 'wire', arguments: '{"amount":999999}' } },
    });
    expect(wired).toEqual([]);
    await env.client.resume(queued.id, { approved: true });
    const done = await env.client.wait(queued.id, { timeoutMs: 30_000 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Wired.' } });
    expect(wired).toEqual([999_999]);
    const history = await env.client.messages(done.id);
    expect(history.filter((message) => message.role === 'tool')[0]).toMatchObject({ content: '{"wired":999999}' });
    expect(validateHistory(history)).toEqual([]);
  });
});
