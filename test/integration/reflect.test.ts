import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { createReflectGraph, DEFAULT_JUDGE_SYSTEM_PROMPT } from '../../worker/agents/graphs/reflect.js';
import { type ScriptedChatRequest } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';
import { terseWriter, wordCountJudge } from '../helpers/agent-fixtures.js';

const isJudge = (request: ScriptedChatRequest) =>
  (request.body.messages[0] as Message).content === DEFAULT_JUDGE_SYSTEM_PROMPT;
const verdict = (approved: boolean, critique: string) => ({ content: JSON.stringify({ approved, critique }) });

/**
 * reflect end to end: client → queue → worker → real openai SDK → scripted server over HTTP. Its loop's
 * logic (caps, repairs, windows, judges) is tested in test/unit/reflect-logic.test.ts.
 */
describe('reflect', () => {
  const { server, env } = useAgentE2E({
    graphs: [createReflectGraph({ name: 'reflect-own', writer: terseWriter, judge: wordCountJudge, maxIterations: 4 })],
  });

  const run = async (input: unknown, graph = 'reflect') => {
    const queued = await env.client.enqueue({ graph, input });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('a run over HTTP: the judge asks for strict json_schema output; steps and history are in the run store', async () => {
    server.setScript([
      { content: 'Queues hold jobs.' },
      verdict(false, 'Mention retries.'),
      { content: 'Queues hold jobs and retry failures.' },
      verdict(true, ''),
    ]);
    const done = await run({
      task: 'Describe a job queue in one sentence.',
      criteria: 'mentions retries',
      maxIterations: 4,
    });
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: 'Queues hold jobs and retry failures.', approved: true, iterations: 2 },
    });
    const requests = server.chatRequests();
    expect(requests.map(isJudge)).toEqual([false, true, false, true]);
    // The judge answers with strict structured output.
    expect(requests[1]!.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'verdict', strict: true },
    });

    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    expect((await env.client.steps(done.id)).map((step) => step.node)).toEqual(['write', 'judge', 'write', 'judge']);
  });

  it("a writer node and a judge subgraph of one's own: the judge's steps run, its verdict drives the loop", async () => {
    server.setScript([{ content: 'Jobs wait in a long patient line.' }, { content: 'Jobs wait, then run.' }]);
    const done = await run({ task: 'A line about queues.' }, 'reflect-own');
    expect(done).toMatchObject({
      status: 'completed',
      output: {
        answer: 'Jobs wait, then run.',
        approved: true,
        iterations: 2,
        reviews: [
          { iteration: 1, approved: false, critique: 'Use at most 5 words, not 7.' },
          { iteration: 2, approved: true, critique: '' },
        ],
      },
    });
    // The writer's own prompt; the second call revises against the judge's critique. No built-in judge call.
    const prompts = server.chatRequests().map((request) => (request.body.messages[1] as Message).content);
    expect(prompts).toEqual([
      'A line about queues.',
      'Revise "Jobs wait in a long patient line." (Use at most 5 words, not 7.): A line about queues.',
    ]);
    expect((await env.client.steps(done.id)).map((step) => step.node)).toEqual([
      'write',
      'judge/count',
      'judge/decide',
      'reviewed',
      'write',
      'judge/count',
      'judge/decide',
      'reviewed',
    ]);
  });
});
