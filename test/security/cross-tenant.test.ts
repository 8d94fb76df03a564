import { randomBytes } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { TenantPolicy } from '../../shared/config/tenant-policy.js';
import { KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { multipart } from '../helpers/multipart-body.js';
import { startRagTestEnv, type RagTestEnv } from '../helpers/rag-fixtures.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually } from '../helpers/test-env.js';
import { obedientModel } from './obedient-model.js';

/**
 * Tenant acme (its producer and its admin key) against every per-tenant resource of tenant globex:
 * runs in each state and their messages, steps, events (SSE), cancel, purge, retry and resume; batches
 * and their results in every format; documents, their upload batches, search and chat over a
 * collection of the same name; conversations and idempotency keys of the same name. Every read of a
 * foreign id must answer 404 exactly as a missing id does, lists and searches must hold nothing of
 * globex's, and globex's marker must appear in no answer acme gets. Counted: successes (must be 0).
 */
const MARKER = `globexonly${randomBytes(6).toString('hex')}`;

/** Waits for a resume: a run of it sits in `waiting` for as long as a test needs. */
const askGraph = defineGraph({ name: 'ask', state: { answer: channel.replace('') }, initialState: () => ({}) })
  .node('ask', (_state, context) => ({ answer: String(context.interrupt<string>({ question: `approve ${MARKER}?` })) }))
  .edge(START, 'ask')
  .edge('ask', END)
  .build();

describe('cross-tenant reads and writes over every resource: 0 successes', () => {
  const data = tempDirectory('agentq-tenants-');
  let rag: RagTestEnv<ApiTestEnv>;
  const foreign: Record<string, string> = {};
  const attempts: { what: string; status: number; leaked: boolean }[] = [];

  const globex = (options: InjectOptions) => rag.env.as(KEYS.globexProducer, options);
  const body = <T>(response: LightMyRequestResponse): T => JSON.parse(response.body) as T;

  beforeAll(async () => {
    // globex's failed run names an unknown tool: the operator's policy lets the run (not the door) refuse it.
    const policy = TenantPolicy.of({ default: { tools: '*' } });
    rag = await startRagTestEnv(
      (options) => startApiTestEnv({ ...options, graphs: [askGraph], api: { policy } }),
      data.path,
      {
        model: { script: obedientModel },
        env: { AGENTQ_CHAT_WAIT_MS: '30000' },
      },
    );
    const { env } = rag;
    // globex's resources: runs in every state, a batch, documents, a conversation.
    const run = async (payload: Record<string, unknown>) =>
      body<{ id: string }>(await globex({ method: 'POST', url: '/v1/runs', payload })).id;
    foreign.completed = await run({
      graph: 'react-agent',
      conversationId: 'shared-conversation',
      idempotencyKey: 'shared-key',
      input: { query: `remember ${MARKER}`, tools: [] },
    });
    foreign.failed = await run({ graph: 'react-agent', input: { query: `fail ${MARKER}`, tools: ['no_such_tool'] } });
    foreign.waiting = await run({ graph: 'ask', input: {} });
    foreign.running = await run({ graph: 'chain', input: { steps: 1, sleepMs: 600_000 } });
    foreign.purgeable = await run({ graph: 'chain', input: { steps: 1 } });
    for (const [name, status] of [
      ['completed', 'completed'],
      ['failed', 'failed'],
      ['waiting', 'waiting'],
      ['running', 'running'],
      ['purgeable', 'completed'],
    ] as const) {
      await eventually(
        async () => (await env.client.get(foreign[name]!))?.status === status,
        30_000,
        `globex's ${name} run`,
      );
    }
    const upload = await globex({
      method: 'POST',
      url: '/v1/documents',
      ...multipart({ collection: 'handbook' }, [
        { name: 'secret.txt', content: `Vacation policy of Globex: ${MARKER} grants 90 days.` },
      ]),
    });
    foreign.ingestBatch = body<{ batchId: string }>(upload).batchId;
    await eventually(
      async () =>
        body<{ finished?: boolean }>(
          await globex({ method: 'GET', url: `/v1/documents/batches/${foreign.ingestBatch}` }),
        ).finished === true,
      60_000,
      "globex's document",
    );
    foreign.document = body<{ documents: { id: string }[] }>(
      await globex({ method: 'GET', url: '/v1/documents' }),
    ).documents[0]!.id;
    const batch = await globex({
      method: 'POST',
      url: '/v1/batches',
      headers: { 'idempotency-key': 'shared-batch' },
      payload: { collection: 'handbook', questions: [{ question: `What is the vacation policy? ${MARKER}` }] },
    });
    foreign.batch = body<{ id: string }>(batch).id;
    await eventually(
      async () =>
        body<{ status: string }>(await globex({ method: 'GET', url: `/v1/batches/${foreign.batch}` })).status !==
        'running',
      60_000,
      "globex's batch",
    );
    // A typo here would make every attempt below ask about a missing id and prove nothing.
    for (const [name, id] of Object.entries(foreign))
      if (typeof id !== 'string' || id === '') throw new Error(`setup: globex's ${name} has no id`);
  });
  afterAll(async () => {
    await rag?.close();
    data.remove();
  });

  /** One attempt by acme: a foreign id must answer exactly what a missing id answers (status and error code). */
  async function tryForeign(key: string, what: string, options: InjectOptions, missing: InjectOptions): Promise<void> {
    const answer = await rag.env.as(key, options);
    const control = await rag.env.as(key, missing);
    const leaked = answer.statusCode < 400 || answer.body.includes(MARKER);
    attempts.push({
      what: `${what} (${key === KEYS.acmeAdmin ? 'admin' : 'producer'})`,
      status: answer.statusCode,
      leaked,
    });
    expect(leaked, `${what}: ${answer.statusCode} ${answer.body.slice(0, 200)}`).toBe(false);
    expect(answer.statusCode, what).toBe(control.statusCode);
    expect(body<{ error: { code: string } }>(answer).error.code, what).toBe(
      body<{ error: { code: string } }>(control).error.code,
    );
  }

  it.each([KEYS.acmeProducer, KEYS.acmeAdmin])(
    'every foreign run, batch and document id answers like a missing one (key %s)',
    async (key) => {
      const runs = ['completed', 'failed', 'waiting', 'running', 'purgeable'].map((name) => foreign[name]!);
      for (const id of runs) {
        for (const [what, method, suffix, payload] of [
          ['get run', 'GET', '', undefined],
          ['messages', 'GET', '/messages', undefined],
          ['steps', 'GET', '/steps', undefined],
          ['events (SSE)', 'GET', '/events', undefined],
          ['retry', 'POST', '/retry', undefined],
          ['resume', 'POST', '/resume', { value: 'approved' }],
          ['cancel', 'DELETE', '', undefined],
          ['purge', 'DELETE', '?purge=true', undefined],
        ] as const) {
          const request = (runId: string): InjectOptions => ({
            method,
            url: `/v1/runs/${runId}${suffix}`,
            ...(payload ? { payload } : {}),
          });
          await tryForeign(key, `${what} ${id}`, request(id), request(`missing-${id}`));
        }
      }
      for (const format of ['', '?format=json', '?format=csv', '?format=jsonl']) {
        await tryForeign(
          key,
          `batch${format}`,
          { method: 'GET', url: `/v1/batches/${foreign.batch}${format}` },
          { method: 'GET', url: `/v1/batches/bat_missing${format}` },
        );
      }
      await tryForeign(
        key,
        'cancel batch',
        { method: 'DELETE', url: `/v1/batches/${foreign.batch}` },
        { method: 'DELETE', url: '/v1/batches/bat_missing' },
      );
      await tryForeign(
        key,
        'document',
        { method: 'GET', url: `/v1/documents/${foreign.document}` },
        { method: 'GET', url: '/v1/documents/doc_00000000000000000000000000000000' },
      );
      await tryForeign(
        key,
        'delete document',
        { method: 'DELETE', url: `/v1/documents/${foreign.document}` },
        { method: 'DELETE', url: '/v1/documents/doc_00000000000000000000000000000000' },
      );
      await tryForeign(
        key,
        'ingest batch',
        { method: 'GET', url: `/v1/documents/batches/${foreign.ingestBatch}` },
        { method: 'GET', url: '/v1/documents/batches/missing-batch' },
      );
    },
  );

  it('lists, search, chat, conversations and idempotency keys of the same names hold nothing of globex', async () => {
    const acme = (options: InjectOptions) => rag.env.as(KEYS.acmeProducer, options);
    const check = (what: string, answer: LightMyRequestResponse, foreignIds: string[] = []) => {
      const leaked = answer.body.includes(MARKER) || foreignIds.some((id) => answer.body.includes(id));
      attempts.push({ what, status: answer.statusCode, leaked });
      expect(leaked, `${what}: ${answer.body.slice(0, 300)}`).toBe(false);
    };
    const allIds = Object.values(foreign);
    check('list runs', await acme({ method: 'GET', url: '/v1/runs?limit=200' }), allIds);
    for (const status of ['completed', 'failed', 'waiting', 'running'])
      check(`list ${status} runs`, await acme({ method: 'GET', url: `/v1/runs?status=${status}` }), allIds);
    check('list documents', await acme({ method: 'GET', url: '/v1/documents' }), allIds);
    check(
      'list documents of the collection',
      await acme({ method: 'GET', url: '/v1/documents?collection=handbook' }),
      allIds,
    );
    check(
      'search',
      await acme({
        method: 'POST',
        url: '/v1/search',
        payload: { query: `vacation policy Globex ${MARKER}`, collection: 'handbook' },
      }),
    );
    check(
      'search every collection',
      await acme({ method: 'POST', url: '/v1/search', payload: { query: `vacation policy Globex ${MARKER}` } }),
    );
    const chat = await acme({
      method: 'POST',
      url: '/v1/agent/chat',
      payload: { query: `What is the vacation policy of Globex? ${MARKER.slice(0, 4)}`, collection: 'handbook' },
    });
    expect(chat.statusCode, chat.body).toBe(200);
    check('chat', chat);
    // The same Idempotency-Key names another run in acme (keys are scoped by tenant).
    const replay = await acme({
      method: 'POST',
      url: '/v1/runs',
      headers: { 'idempotency-key': 'shared-key' },
      payload: { graph: 'chain', input: { steps: 1 } },
    });
    expect(replay.statusCode).toBe(202);
    expect(replay.headers['idempotent-replayed']).toBeUndefined();
    check('idempotency key of the same name', replay, allIds);
    const sameBatchKey = await acme({
      method: 'POST',
      url: '/v1/batches',
      headers: { 'idempotency-key': 'shared-batch' },
      payload: { collection: 'handbook', questions: [{ question: 'anything?' }] },
    });
    check('batch idempotency key of the same name', sameBatchKey, allIds);
    // A conversation of the same id starts empty for acme: globex's turn is not in its prompt.
    rag.server!.reset();
    const turn = body<{ id: string }>(
      await acme({
        method: 'POST',
        url: '/v1/runs',
        payload: {
          graph: 'react-agent',
          conversationId: 'shared-conversation',
          input: { query: 'What did I ask you to remember?', tools: [] },
        },
      }),
    );
    const done = await rag.env.client.wait(turn.id, { timeoutMs: 30_000 });
    expect(done.status).toBe('completed');
    const prompts = rag.server!.chatRequests().map((request) => JSON.stringify(request.body));
    expect(prompts.length).toBeGreaterThan(0);
    const leakedPrompt = prompts.some((prompt) => prompt.includes(MARKER));
    attempts.push({ what: 'conversation of the same id', status: 200, leaked: leakedPrompt });
    expect(leakedPrompt).toBe(false);
  });

  it("globex's resources are intact after acme's attempts", async () => {
    const { client } = rag.env;
    expect((await client.get(foreign.running!))?.status).toBe('running');
    expect((await client.get(foreign.waiting!))?.status).toBe('waiting');
    expect((await client.get(foreign.failed!))?.status).toBe('failed');
    expect((await client.get(foreign.purgeable!))?.status).toBe('completed');
    expect((await globex({ method: 'GET', url: `/v1/documents/${foreign.document}` })).statusCode).toBe(200);
    expect((await globex({ method: 'DELETE', url: `/v1/runs/${foreign.running}` })).statusCode).toBeLessThan(300);
    const successes = attempts.filter((attempt) => attempt.leaked).length;
    recordFigure({ scenario: 'cross-tenant', name: 'attempts', value: attempts.length });
    recordFigure({ scenario: 'cross-tenant', name: 'successes', value: successes, goal: '= 0' });
    expect(successes).toBe(0);
  });
});
