import { describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import {
  createReflectGraph,
  critiqueMessage,
  DEFAULT_JUDGE_SYSTEM_PROMPT,
  type ReflectWriter,
} from '../../worker/agents/graphs/reflect.js';
import { type ScriptedChatRequest } from '../fakes/scripted-openai-server.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';

const isJudge = (request: ScriptedChatRequest) =>
  (request.body.messages[0] as Message).content === DEFAULT_JUDGE_SYSTEM_PROMPT;
const verdict = (approved: boolean, critique: string) => ({ content: JSON.stringify({ approved, critique }) });

/** A writer of one's own: one model call with its own prompt, revising against the latest critique. */
const terseWriter: ReflectWriter = async (state, context) => {
  const prompt = state.critique ? `Revise "${state.draft}" (${state.critique}): ${state.task}` : state.task;
  const response = await callLanguageModel(context, {
    messages: [
      { role: 'system', content: 'You write one line.' },
      { role: 'user', content: prompt },
    ],
  });
  return { draft: response.message.content ?? '' };
};

/** A judge of one's own as a subgraph of two steps, no model: approves a draft of at most five words. */
const wordCountJudge = defineGraph({
  name: 'word-count-judge',
  state: {
    draft: channel.replace(''),
    critique: channel.replace<string | null>(null),
    verdict: channel.replace<unknown>(null),
  },
})
  .node('count', (state) => ({ critique: `${state.draft.split(/\s+/).filter(Boolean).length} words` }))
  .node('decide', (state) => {
    const words = Number.parseInt(state.critique ?? '0', 10);
    return { verdict: { approved: words <= 5, critique: words <= 5 ? '' : `Use at most 5 words, not ${words}.` } };
  })
  .edge(START, 'count')
  .edge('count', 'decide')
  .edge('decide', END)
  .build();

/** reflect end to end: client → queue → worker → real openai SDK → scripted server over HTTP. */
describe('reflect', () => {
  const { server, env } = useAgentE2E({
    graphs: [
      createReflectGraph({ name: 'reflect-own', writer: terseWriter, judge: wordCountJudge, maxIterations: 4 }),
      createReflectGraph({
        name: 'reflect-own-judge',
        judge: (state) => ({ verdict: { approved: state.draft.endsWith('.'), critique: 'End with a full stop.' } }),
      }),
    ],
  });

  const run = async (input: unknown, graph = 'reflect') => {
    const queued = await env.client.enqueue({ graph, input });
    return env.client.wait(queued.id, { timeoutMs: 30_000 });
  };

  it('stops as soon as the judge approves; the critique went back to the writer as a user message', async () => {
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
      output: {
        answer: 'Queues hold jobs and retry failures.',
        approved: true,
        iterations: 2,
        reviews: [
          { iteration: 1, approved: false, critique: 'Mention retries.' },
          { iteration: 2, approved: true, critique: '' },
        ],
      },
    });
    const requests = server.chatRequests();
    expect(requests.map(isJudge)).toEqual([false, true, false, true]);
    // The judge answers with strict structured output.
    expect(requests[1]!.body.response_format).toMatchObject({
      type: 'json_schema',
      json_schema: { name: 'verdict', strict: true },
    });
    expect((requests[1]!.body.messages[1] as Message).content).toMatch(
      /Criteria: mentions retries[\s\S]*Draft 1 of at most 4:\nQueues hold jobs\./,
    );
    // The second draft was asked with the critique as the latest user message.
    expect((requests[2]!.body.messages as Message[]).at(-1)).toEqual({
      role: 'user',
      content: critiqueMessage('Mention retries.'),
    });

    const history = await env.client.messages(done.id);
    expect(validateHistory(history)).toEqual([]);
    expect(history.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    expect((await env.client.steps(done.id)).map((step) => step.node)).toEqual(['write', 'judge', 'write', 'judge']);
  });

  it('stops at the iteration cap with the last draft, not approved', async () => {
    server.setScript([
      { content: 'draft 1' },
      verdict(false, 'worse'),
      { content: 'draft 2' },
      verdict(false, 'still not'),
    ]);
    const done = await run({ task: 'Write something perfect.', maxIterations: 2 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'draft 2', approved: false, iterations: 2 } });
    expect(server.chatRequests()).toHaveLength(4);
    // No critique is appended after the last draft: nobody would read it.
    const history = await env.client.messages(done.id);
    expect(history.at(-1)).toEqual({ role: 'assistant', content: 'draft 2' });
  });

  it('repairs an invalid verdict once, and fails the run after a second one', async () => {
    server.setScript([{ content: 'draft' }, { content: 'looks good' }, verdict(true, '')]);
    const repaired = await run({ task: 'Anything.' });
    expect(repaired).toMatchObject({ status: 'completed', output: { approved: true, iterations: 1 } });

    server.reset();
    server.setScript([{ content: 'draft' }, { content: '{"approved": "maybe"}' }, { content: '{"approved": true}' }]);
    const failed = await run({ task: 'Anything.' });
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'PROVIDER_ERROR', node: 'judge', retryable: false },
    });
    expect(failed.error?.message).toMatch(
      /did not match the structured output schema 'verdict' after one repair round: critique: /,
    );
    expect(server.chatRequests()).toHaveLength(3);
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

  it("the graph's maxIterations is the runs' default; a run's own overrides it; a judge function's verdict is applied", async () => {
    server.setScript(() => ({ content: 'far too many words in this line here' }));
    const capped = await run({ task: 'A line.' }, 'reflect-own');
    expect(capped).toMatchObject({ status: 'completed', output: { approved: false, iterations: 4 } });
    server.reset();
    server.setScript(() => ({ content: 'far too many words in this line here' }));
    const once = await run({ task: 'A line.', maxIterations: 1 }, 'reflect-own');
    expect(once).toMatchObject({ status: 'completed', output: { approved: false, iterations: 1 } });
    server.reset();
    server.setScript([{ content: 'No stop' }, { content: 'A stop.' }]);
    const judged = await run({ task: 'Say something.' }, 'reflect-own-judge');
    expect(judged).toMatchObject({
      status: 'completed',
      output: {
        answer: 'A stop.',
        approved: true,
        iterations: 2,
        reviews: [{ approved: false, critique: 'End with a full stop.' }, { approved: true }],
      },
    });
    // The built-in writer got the function judge's critique as a user message.
    expect(server.chatRequests()[1]!.body.messages.at(-1)).toEqual({
      role: 'user',
      content: critiqueMessage('End with a full stop.'),
    });
  });

  it('rejects an invalid input at the door', async () => {
    const done = await run({ task: 'x', maxIterations: 11 });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(done.error?.message).toMatch(/maxIterations must be at most 10/);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('memory.window: the writer sees its system prompt and the task, then only the last N messages; a bad window is refused', async () => {
    server.setScript([
      { content: 'draft 1' },
      verdict(false, 'critique 1'),
      { content: 'draft 2' },
      verdict(false, 'critique 2'),
      { content: 'draft 3' },
      verdict(true, ''),
    ]);
    const done = await run({ task: 'Write a motto.', maxIterations: 3, memory: { window: 2 } });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'draft 3', approved: true, iterations: 3 } });
    const writes = server.chatRequests().filter((request) => !isJudge(request));
    const contents = (index: number) => (writes[index]!.body.messages as Message[]).map((message) => message.content);
    expect(contents(1)).toEqual([expect.any(String), 'Write a motto.', 'draft 1', critiqueMessage('critique 1')]);
    // Draft 1 and its critique fell out of the window; the task did not.
    expect(contents(2)).toEqual([expect.any(String), 'Write a motto.', 'draft 2', critiqueMessage('critique 2')]);
    // The history keeps every message: the window is what prompts show.
    expect(await env.client.messages(done.id)).toHaveLength(7);

    server.reset();
    const bad = await run({ task: 'Write a motto.', memory: { window: 0 } });
    expect(bad.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('memory.window must be an integer from 1 to 10000'),
    });
    expect(server.chatRequests()).toHaveLength(0);
  });
});
