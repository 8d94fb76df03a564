import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../shared/contracts/errors.js';
import type { RunStatus } from '../../shared/contracts/run-record.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { callLanguageModel } from '../../worker/agents/llm/call-language-model.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import {
  RESPONSE_SHAPES,
  SHAPE_TOOL,
  responseShape,
  type ResponseShapeName,
} from '../fakes/scripted-response-shapes.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { recordFigure } from '../helpers/suite-figures.js';

/** One model call whose answer (text and tool names) is the run's output; retried like react-agent's model step. */
const oneCallGraph = defineGraph({
  name: 'one-call',
  state: { query: channel.replace(''), answer: channel.replace(''), tools: channel.replace<string[]>([]) },
  initialState: (input: unknown) => ({ query: (input as { query: string }).query }),
  output: (state) => ({ answer: state.answer, tools: state.tools, sources: [] }),
})
  .node(
    'model',
    async (state, context) => {
      const response = await callLanguageModel(context, { messages: [{ role: 'user', content: state.query }] });
      return {
        answer: response.message.content ?? '',
        tools: (response.message.tool_calls ?? []).map((call) => call.function.name),
      };
    },
    { retry: { maxAttempts: 3, initialDelayMs: 50, maxDelayMs: 100 } },
  )
  .edge(START, 'model')
  .edge('model', END)
  .build();

const OUTCOMES: Record<ResponseShapeName, { status: RunStatus; code?: ErrorCode }> = {
  'json-to-stream': { status: 'completed' },
  refusal: { status: 'failed', code: 'MODEL_REFUSED' },
  'content-filter-empty': { status: 'failed', code: 'CONTENT_FILTERED' },
  'length-empty': { status: 'failed', code: 'OUTPUT_TRUNCATED' },
  // Saved by the collector as the step's answer: a retry would read it again, so it fails at once.
  empty: { status: 'failed', code: 'EMPTY_RESPONSE' },
  'custom-tool-call': { status: 'failed', code: 'UNSUPPORTED_TOOL_CALL' },
  'legacy-function-call': { status: 'completed' },
};

/** The same rules hold for an answer that came through the provider's Batch API (read by the same codec). */
describe('response shapes through a provider batch', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  beforeAll(async () => {
    // Each question is a shape's name; its batch line is answered with that shape.
    server = await startScriptedOpenAIServer({
      script: (request) => {
        const messages = request.body.messages as { content: string }[];
        return responseShape(messages.at(-1)!.content as ResponseShapeName);
      },
      batchApi: { validatingMs: 50, processingMs: 100 },
    });
    env = await startTestEnv({
      graphs: [oneCallGraph],
      env: {
        OPENAI_BASE_URL: server.url,
        LLM_MODEL: 'scripted-chat',
        AGENTQ_PROVIDER_BATCH_FLUSH_MS: '60000',
        AGENTQ_PROVIDER_BATCH_POLL_MS: '100',
      },
    });
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  it('each shape ends as it does live, and nothing is asked twice', async () => {
    const names = RESPONSE_SHAPES.map((shape) => shape.name);
    const { batch } = await env.client.batches.submit({
      collection: 'docs',
      questions: names.map((question) => ({ question })),
      options: { graph: 'one-call' },
      providerBatch: true,
    });
    await eventually(
      async () => {
        const record = await env.client.batches.get(batch.id);
        return record && record.status !== 'running' ? record : undefined;
      },
      60_000,
      `batch ${batch.id} to finish`,
    );
    const results = (await env.client.batches.results(batch.id))!;
    for (const [index, name] of names.entries()) {
      const run = (await env.client.get(results[index]!.runId))!;
      recordFigure({
        scenario: 'response shapes (provider batch)',
        name,
        value: `${run.status}${run.error ? ` ${run.error.code}` : ''}`,
        goal: `${OUTCOMES[name].status}${OUTCOMES[name].code ? ` ${OUTCOMES[name].code}` : ''}`,
      });
      expect([name, run.status, run.error?.code]).toEqual([name, OUTCOMES[name].status, OUTCOMES[name].code]);
      if (name === 'legacy-function-call') expect(run.output).toMatchObject({ tools: [SHAPE_TOOL] });
    }
    // One provider batch, one line per question: no shape made a step ask again.
    expect(server.batchApi!.batches.map((created) => created.lines.length)).toEqual([names.length]);
    expect(server.chatRequests()).toHaveLength(0);
  });
});
