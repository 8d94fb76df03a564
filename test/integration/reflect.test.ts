import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { validateHistory } from '../../shared/contracts/validate-history.js';
import type { Message } from '../../shared/contracts/run-record.js';
import { critiqueMessage, DEFAULT_JUDGE_SYSTEM_PROMPT } from '../../worker/agents/graphs/reflect.js';
import {
  startScriptedOpenAIServer,
  type ScriptedChatRequest,
  type ScriptedOpenAIServer,
} from '../fakes/scripted-openai-server.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

const isJudge = (request: ScriptedChatRequest) =>
  (request.body.messages[0] as Message).content === DEFAULT_JUDGE_SYSTEM_PROMPT;
const verdict = (approved: boolean, critique: string) => ({ content: JSON.stringify({ approved, critique }) });

/** reflect end to end: client → queue → worker → real openai SDK → scripted server over HTTP. */
describe('reflect', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
    env = await startTestEnv({ env: { OPENAI_BASE_URL: server.url, LLM_MODEL: 'scripted-chat' } });
  });
  afterAll(async () => {
    await env.close();
    await server.close();
  });
  beforeEach(() => server.reset());

  const run = async (input: unknown) => {
    const queued = await env.client.enqueue({ graph: 'reflect', input });
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
