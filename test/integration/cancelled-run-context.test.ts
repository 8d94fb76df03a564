import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { eventually } from '../helpers/test-env.js';

/** Drafts, then waits until it is cancelled: a run with committed context and no output. */
const draftThenWait = defineGraph({
  name: 'draft-then-wait',
  state: { draft: channel.replace(''), rounds: channel.replace(0) },
  output: (state) => ({ answer: state.draft }),
})
  .node('draft', () => ({
    draft: 'half an answer',
    rounds: 1,
    messages: [{ role: 'assistant', content: 'half an answer' }],
  }))
  .node(
    'wait',
    (_state, context) =>
      new Promise<never>((_resolve, reject) =>
        context.abortSignal.addEventListener('abort', () => reject(context.abortSignal.reason as Error)),
      ),
  )
  .edge(START, 'draft')
  .edge('draft', 'wait')
  .edge('wait', END)
  .build();

describe('a cancelled run keeps its last context', () => {
  let env: ApiTestEnv;
  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [draftThenWait] });
  });
  afterAll(async () => env.close());

  it('its record carries the last committed state as output.partial, through the client and GET /v1/runs/:id', async () => {
    const created = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'draft-then-wait', input: {} },
    });
    const id = json(created).id as string;
    await eventually(async () => (await env.client.get(id))?.stepCount === 1, 15_000, 'the draft step to commit');
    const cancelling = await env.as(KEYS.acmeProducer, { method: 'DELETE', url: `/v1/runs/${id}` });
    expect([200, 202]).toContain(cancelling.statusCode);
    const cancelled = await env.client.wait(id, { timeoutMs: 15_000 });
    expect(cancelled).toMatchObject({
      status: 'cancelled',
      stepCount: 1,
      error: { code: 'CANCELLED' },
      output: { partial: { draft: 'half an answer', rounds: 1 } },
    });

    const polled = await env.as(KEYS.acmeProducer, { method: 'GET', url: `/v1/runs/${id}` });
    expect(json(polled)).toMatchObject({
      status: 'cancelled',
      output: { partial: { draft: 'half an answer', rounds: 1 } },
    });
    expect((await env.client.messages(id)).map((message) => message.content)).toEqual(['half an answer']);
  });
});
