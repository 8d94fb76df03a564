import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../shared/contracts/errors.js';
import type { RunStatus } from '../../shared/contracts/run-record.js';
import {
  RESPONSE_SHAPES,
  SHAPE_TOOL,
  responseShape,
  type ResponseShapeName,
} from '../fakes/scripted-response-shapes.js';
import { useAgentE2E } from '../helpers/agent-e2e.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { DEFAULT_JUDGE_SYSTEM_PROMPT } from '../../worker/agents/graphs/reflect.js';

/** How a react-agent run ends when the model answers with each shape (and the run accepts none). */
const OUTCOMES: Record<ResponseShapeName, { status: RunStatus; code?: ErrorCode; modelCalls: number }> = {
  'json-to-stream': { status: 'completed', modelCalls: 1 },
  refusal: { status: 'failed', code: 'MODEL_REFUSED', modelCalls: 1 },
  'content-filter-empty': { status: 'failed', code: 'CONTENT_FILTERED', modelCalls: 1 },
  'length-empty': { status: 'failed', code: 'OUTPUT_TRUNCATED', modelCalls: 1 },
  // Retryable: each of the model step's 5 attempts asks again (the empty answer is never saved and replayed).
  empty: { status: 'failed', code: 'EMPTY_RESPONSE', modelCalls: 5 },
  'custom-tool-call': { status: 'failed', code: 'UNSUPPORTED_TOOL_CALL', modelCalls: 1 },
  // The function_call runs the calculator, then the model answers.
  'legacy-function-call': { status: 'completed', modelCalls: 2 },
};

const FINAL = '2+3 is 5.';

/**
 * Every response shape of the provider's contract, end to end: client → queue → worker → the real
 * openai SDK over HTTP → the scripted server, streamed (the default) and not (AGENTQ_LLM_STREAM=false).
 */
describe.each([true, false])('react-agent runs for each response shape (streamed: %s)', (streamed) => {
  const { server, env } = useAgentE2E({
    env: {
      OPENAI_API_KEY: 'test-key',
      AGENTQ_LLM_STREAM: String(streamed),
    },
  });

  /** The shape first; after it (a tool's result), the final answer — or the shape again for a retried step. */
  const script = (name: ResponseShapeName) =>
    server.setScript((request) =>
      (request.body.messages as { role: string }[]).some((message) => message.role === 'tool')
        ? { content: FINAL }
        : responseShape(name),
    );
  const run = async (input: Record<string, unknown>) => {
    const queued = await env.client.enqueue({ graph: 'react-agent', input: { tools: [SHAPE_TOOL], ...input } });
    return env.client.wait(queued.id, { timeoutMs: 60_000 });
  };

  it.each(RESPONSE_SHAPES.map((shape) => shape.name))('%s', async (name) => {
    script(name);
    const done = await run({ query: 'what is 2+3?' });
    const expected = OUTCOMES[name];
    recordFigure({
      scenario: `response shapes (${streamed ? 'streamed' : 'not streamed'})`,
      name,
      value: `${done.status}${done.error ? ` ${done.error.code}` : ''}`,
      goal: `${expected.status}${expected.code ? ` ${expected.code}` : ''}`,
    });
    expect(done.status).toBe(expected.status);
    expect(done.error?.code).toBe(expected.code);
    expect(server.chatRequests()).toHaveLength(expected.modelCalls);
    if (name === 'json-to-stream') expect(done.output).toEqual({ answer: 'The answer, as one JSON body.' });
    if (name === 'refusal') expect(done.error?.message).toContain("I'm sorry, but I can't help with that request.");
    if (name === 'custom-tool-call') expect(done.error?.message).toMatch(/'custom' call of tool 'calculator'/);
    if (name === 'legacy-function-call') {
      expect(done.output).toEqual({ answer: FINAL });
      const history = await env.client.messages(done.id);
      expect(history.find((message) => message.role === 'tool')).toMatchObject({
        content: JSON.stringify({ expression: '2+3', result: 5 }),
      });
    }
  });

  it('completes with an empty answer only when the run accepts an empty reply', async () => {
    script('empty');
    const done = await run({ query: 'say nothing', accept: ['empty'] });
    expect(done).toMatchObject({ status: 'completed', output: { answer: '' } });
    expect(server.chatRequests()).toHaveLength(1);
  });

  it('an accepted refusal is the answer', async () => {
    script('refusal');
    const done = await run({ query: 'something refused', accept: ['refusal'] });
    expect(done).toMatchObject({
      status: 'completed',
      output: { answer: "I'm sorry, but I can't help with that request." },
    });
  });

  it("reflect's judge refusing fails the run with MODEL_REFUSED and the judge's own words", async () => {
    const refusal = 'I cannot judge this draft.';
    server.setScript((request) =>
      (request.body.messages[0] as { content: unknown }).content === DEFAULT_JUDGE_SYSTEM_PROMPT
        ? { refusal }
        : { content: 'A draft.' },
    );
    const queued = await env.client.enqueue({ graph: 'reflect', input: { task: 'Write one line.' } });
    const done = await env.client.wait(queued.id, { timeoutMs: 60_000 });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'MODEL_REFUSED', node: 'judge', retryable: false } });
    expect(done.error?.message).toContain(refusal);
  });

  it("reflect's writer refusing fails the run, unless the run accepts a refusal: then the refusal is the draft", async () => {
    const refusal = 'I will not write that.';
    server.setScript((request) =>
      (request.body.messages[0] as { content: unknown }).content === DEFAULT_JUDGE_SYSTEM_PROMPT
        ? { content: JSON.stringify({ approved: true, critique: '' }) }
        : { refusal },
    );
    const reflect = async (input: Record<string, unknown>) =>
      env.client.wait((await env.client.enqueue({ graph: 'reflect', input: { task: 'Write.', ...input } })).id, {
        timeoutMs: 60_000,
      });
    expect(await reflect({})).toMatchObject({ status: 'failed', error: { code: 'MODEL_REFUSED', node: 'write' } });
    expect(await reflect({ accept: ['refusal'] })).toMatchObject({
      status: 'completed',
      output: { answer: refusal, approved: true },
    });
  });

  it('fails a run whose accept names something else, before any model call', async () => {
    const done = await run({ query: 'q', accept: ['anything'] });
    expect(done).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
    expect(done.error?.message).toMatch(/accept/);
    expect(server.chatRequests()).toHaveLength(0);
  });
});
