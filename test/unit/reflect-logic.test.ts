import { describe, expect, it } from 'vitest';
import type { Message } from '../../shared/contracts/run-record.js';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { LanguageModelRequest } from '../../shared/ports/language-model.js';
import { MockLanguageModel, runInProcess } from '../../testing/index.js';
import {
  createReflectGraph,
  critiqueMessage,
  DEFAULT_JUDGE_SYSTEM_PROMPT,
  reflectGraph,
} from '../../worker/agents/graphs/reflect.js';
import { terseWriter, wordCountJudge } from '../helpers/agent-fixtures.js';

// reflect's loop on the in-process runner and a scripted model; the end-to-end file
// (test/integration/reflect.test.ts) keeps a run through the engine and the OpenAI adapter over HTTP.

const isJudge = (request: LanguageModelRequest) => request.messages[0]?.content === DEFAULT_JUDGE_SYSTEM_PROMPT;
const verdict = (approved: boolean, critique: string) => JSON.stringify({ approved, critique });
const nodes = (result: { steps: { node: string }[] }) => result.steps.map((step) => step.node);
const run = (llm: MockLanguageModel, input: unknown, graph = reflectGraph) =>
  runInProcess(graph, input, { services: { languageModel: llm } });

const reflectOwn = createReflectGraph({
  name: 'reflect-own',
  writer: terseWriter,
  judge: wordCountJudge,
  maxIterations: 4,
});
const reflectOwnJudge = createReflectGraph({
  name: 'reflect-own-judge',
  judge: (state) => ({ verdict: { approved: state.draft.endsWith('.'), critique: 'End with a full stop.' } }),
});

describe('reflect logic', () => {
  it('stops as soon as the judge approves; the critique went back to the writer as a user message', async () => {
    const llm = new MockLanguageModel({
      generate: [
        'Queues hold jobs.',
        verdict(false, 'Mention retries.'),
        'Queues hold jobs and retry failures.',
        verdict(true, ''),
      ],
    });
    const done = await run(llm, {
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
    expect(llm.calls.map(isJudge)).toEqual([false, true, false, true]);
    // The judge answers with strict structured output.
    expect(llm.calls[1]!.responseFormat).toMatchObject({ type: 'json_schema', name: 'verdict', strict: true });
    expect(llm.calls[1]!.messages[1]!.content).toMatch(
      /Criteria: mentions retries[\s\S]*Draft 1 of at most 4:\nQueues hold jobs\./,
    );
    expect(llm.calls[2]!.messages.at(-1)).toEqual({ role: 'user', content: critiqueMessage('Mention retries.') });
    expect(validateHistory(done.messages)).toEqual([]);
    expect(done.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant']);
    expect(nodes(done)).toEqual(['write', 'judge', 'write', 'judge']);
  });

  it('stops at the iteration cap with the last draft, not approved', async () => {
    const llm = new MockLanguageModel({
      generate: ['draft 1', verdict(false, 'worse'), 'draft 2', verdict(false, 'still not')],
    });
    const done = await run(llm, { task: 'Write something perfect.', maxIterations: 2 });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'draft 2', approved: false, iterations: 2 } });
    expect(llm.calls).toHaveLength(4);
    // No critique is appended after the last draft: nobody would read it.
    expect(done.messages.at(-1)).toEqual({ role: 'assistant', content: 'draft 2' });
  });

  it('repairs an invalid verdict once, and fails the run after a second one', async () => {
    const repaired = await run(new MockLanguageModel({ generate: ['draft', 'looks good', verdict(true, '')] }), {
      task: 'Anything.',
    });
    expect(repaired).toMatchObject({ status: 'completed', output: { approved: true, iterations: 1 } });

    const llm = new MockLanguageModel({ generate: ['draft', '{"approved": "maybe"}', '{"approved": true}'] });
    const failed = await run(llm, { task: 'Anything.' });
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'PROVIDER_ERROR', node: 'judge', retryable: false },
    });
    expect(failed.error?.message).toMatch(
      /did not match the structured output schema 'verdict' after one repair round: critique: /,
    );
    expect(llm.calls).toHaveLength(3);
  });

  it("a writer node and a judge subgraph of one's own: the judge's steps run, its verdict drives the loop", async () => {
    const llm = new MockLanguageModel({ generate: ['Jobs wait in a long patient line.', 'Jobs wait, then run.'] });
    const done = await run(llm, { task: 'A line about queues.' }, reflectOwn);
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
    expect(llm.calls.map((request) => request.messages[1]!.content)).toEqual([
      'A line about queues.',
      'Revise "Jobs wait in a long patient line." (Use at most 5 words, not 7.): A line about queues.',
    ]);
    expect(nodes(done)).toEqual([
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
    const wordy = () => new MockLanguageModel({ generate: () => 'far too many words in this line here' });
    const capped = await run(wordy(), { task: 'A line.' }, reflectOwn);
    expect(capped).toMatchObject({ status: 'completed', output: { approved: false, iterations: 4 } });
    const once = await run(wordy(), { task: 'A line.', maxIterations: 1 }, reflectOwn);
    expect(once).toMatchObject({ status: 'completed', output: { approved: false, iterations: 1 } });
    const llm = new MockLanguageModel({ generate: ['No stop', 'A stop.'] });
    const judged = await run(llm, { task: 'Say something.' }, reflectOwnJudge);
    expect(judged).toMatchObject({
      status: 'completed',
      output: {
        answer: 'A stop.',
        approved: true,
        iterations: 2,
        reviews: [{ approved: false, critique: 'End with a full stop.' }, { approved: true }],
      },
    });
    expect(llm.calls[1]!.messages.at(-1)).toEqual({ role: 'user', content: critiqueMessage('End with a full stop.') });
  });

  it('rejects an invalid input at the door', async () => {
    const llm = new MockLanguageModel();
    const done = await run(llm, { task: 'x', maxIterations: 11 });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(done.error?.message).toMatch(/maxIterations must be at most 10/);
    expect(llm.calls).toHaveLength(0);
  });

  it('memory.window: the writer sees its system prompt and the task, then only the last N messages; a bad window is refused', async () => {
    const llm = new MockLanguageModel({
      generate: [
        'draft 1',
        verdict(false, 'critique 1'),
        'draft 2',
        verdict(false, 'critique 2'),
        'draft 3',
        verdict(true, ''),
      ],
    });
    const done = await run(llm, { task: 'Write a motto.', maxIterations: 3, memory: { window: 2 } });
    expect(done).toMatchObject({ status: 'completed', output: { answer: 'draft 3', approved: true, iterations: 3 } });
    const writes = llm.calls.filter((request) => !isJudge(request));
    const contents = (index: number) => writes[index]!.messages.map((message: Message) => message.content);
    expect(contents(1)).toEqual([expect.any(String), 'Write a motto.', 'draft 1', critiqueMessage('critique 1')]);
    // Draft 1 and its critique fell out of the window; the task did not.
    expect(contents(2)).toEqual([expect.any(String), 'Write a motto.', 'draft 2', critiqueMessage('critique 2')]);
    // The history keeps every message: the window is what prompts show.
    expect(done.messages).toHaveLength(7);

    const untouched = new MockLanguageModel();
    const bad = await run(untouched, { task: 'Write a motto.', memory: { window: 0 } });
    expect(bad.error).toMatchObject({
      code: 'INVALID_INPUT',
      message: expect.stringContaining('memory.window must be an integer from 1 to 10000'),
    });
    expect(untouched.calls).toHaveLength(0);
  });
});
