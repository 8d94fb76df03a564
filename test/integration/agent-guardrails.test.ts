import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { defineGuardrail } from '../../worker/agents/guardrails/define-guardrail.js';
import { createMultiAgentGraph } from '../../worker/agents/graphs/multi-agent.js';
import {
  createReflectGraph,
  critiqueMessage,
  DEFAULT_JUDGE_SYSTEM_PROMPT,
} from '../../worker/agents/graphs/reflect.js';
import { type ScriptedChatRequest } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';

/** Rewrites an account number out of any text. */
const noAccounts = defineGuardrail({
  name: 'no_accounts',
  description: 'Account numbers never reach the model or the user',
  check: (text) =>
    /ACC-\d+/.test(text) ? { action: 'rewrite', text: text.replace(/ACC-\d+/g, '<account>') } : { action: 'pass' },
});
/** Sends an answer that shouts back. */
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

const isJudge = (request: ScriptedChatRequest) =>
  (request.body.messages[0] as Message).content === DEFAULT_JUDGE_SYSTEM_PROMPT;
const verdict = (approved: boolean, critique = '') => ({ content: JSON.stringify({ approved, critique }) });
const userContents = (request: ScriptedChatRequest) =>
  (request.body.messages as unknown as Message[]).filter((message) => message.role === 'user').map((m) => m.content);

const experts = [
  { name: 'redis', description: 'Redis persistence, AOF and RDB snapshots' },
  { name: 'queues', description: 'Job queues, retries and idempotency' },
];

/** Guardrails on reflect and multi-agent (as on react-agent and rag-agent), through the real openai SDK. */
describe('guardrails on reflect and multi-agent', () => {
  const guardrails = { input: ['no_accounts', 'refuse_deletes'], output: ['no_shouting', 'no_accounts'] };
  const { server, env } = useAgentE2E({
    services: { guardrails: [noAccounts, noShouting, refuseDeletes] },
    graphs: [
      createReflectGraph({ name: 'guarded-reflect', guardrails }),
      createMultiAgentGraph({ name: 'guarded-experts', guardrails }),
    ],
  });

  const run = async (graph: string, input: unknown) => {
    const queued = await env.client.enqueue({ graph, input });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('reflect: the writer reads the rewritten task; an approved draft that shouts goes back as a critique', async () => {
    server.setScript((request) => {
      if (isJudge(request)) return verdict(true);
      return { content: server.chatRequests().length <= 1 ? 'QUEUES ARE GREAT' : 'Queues are great (ACC-9).' };
    });
    const done = await run('guarded-reflect', { task: 'Praise queues for ACC-12345.' });
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: 'Queues are great (<account>).', approved: true, iterations: 2 },
    });
    const writerRequests = server.chatRequests().filter((request) => !isJudge(request));
    expect(userContents(writerRequests[0]!)).toEqual(['Praise queues for <account>.']);
    expect(userContents(writerRequests[1]!).at(-1)).toBe(
      critiqueMessage("Your answer was rejected by the guardrail 'no_shouting': Do not write in capitals."),
    );
    expect(validateHistory(await env.client.messages(done.id))).toEqual([]);
  });

  it('reflect: a shouting last draft is blocked; a refused task fails before any model call', async () => {
    server.setScript((request) => (isJudge(request) ? verdict(true) : { content: 'LOUD ANSWER' }));
    const loud = await run('guarded-reflect', { task: 'Say something.', maxIterations: 1 });
    expect(loud).toMatchObject({ status: 'failed', error: { code: 'GUARDRAIL_BLOCKED' } });
    server.reset();
    const refused = await run('guarded-reflect', { task: 'Delete every queue.' });
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'GUARDRAIL_BLOCKED' } });
    expect(refused.error?.message).toMatch(/refuse_deletes/);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('multi-agent: the rewritten query is recalled and led; a shouting answer is sent back to the lead', async () => {
    server.setScript([{ content: 'USE AOF EVERYSEC' }, { content: 'Use AOF everysec.' }]);
    const done = await run('guarded-experts', { query: 'AOF or RDB for ACC-77?', experts, recall: 'first' });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Use AOF everysec.', lead: 'redis' } });
    const [first, second] = server.chatRequests();
    expect(userContents(first!)).toEqual(['AOF or RDB for <account>?']);
    expect(userContents(second!).at(-1)).toBe(
      "Your answer was rejected by the guardrail 'no_shouting': Do not write in capitals.",
    );
    expect(validateHistory(await env.client.messages(done.id))).toEqual([]);
    const steps = (await env.client.steps(done.id)).map((step) => step.node);
    expect(steps).toEqual(['recall', 'lead', 'lead']);
  });

  it('a run names guardrails on the built-in graphs; a refused query fails before any model call', async () => {
    const refused = await run('multi-agent', {
      query: 'Delete the AOF file?',
      experts,
      guardrails: { input: ['refuse_deletes'] },
    });
    expect(refused).toMatchObject({ status: 'failed', error: { code: 'GUARDRAIL_BLOCKED' } });
    server.setScript([{ content: 'Fine (ACC-1).' }, verdict(true)]);
    const done = await run('reflect', { task: 'Anything.', guardrails: { output: ['no_accounts'] } });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'Fine (<account>).' } });
    expect(server.chatRequests()).toHaveLength(2);
  });
});
