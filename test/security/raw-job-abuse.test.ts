import fc from 'fast-check';
import type { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTAKE_QUEUE, STEP_QUEUE } from '../../shared/contracts/queues.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { atScale, suiteSeed } from '../helpers/suite-scale.js';
import { recordFigure } from '../helpers/suite-figures.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { settledJob } from './settled-job.js';

/**
 * Raw jobs (job schema v1) that are malformed or oversized, added with plain BullMQ as another service
 * would: each fails at its first attempt (BullMQ's attemptsMade 1 although the job allows 5), the
 * scripted model receives no request, and a run record, when one was made, is failed with a code and
 * a message naming the problem (bad input stops at the door). The graph is `react-agent` wherever the job names one,
 * so any job that slipped through would call the model.
 */
const TEN_MB = 'x'.repeat(10 * 1024 * 1024);
/** Deeper than JSON.stringify can write on this stack: only a non-JS producer (or a hand-made hash) can send it. */
const DEEP = 100_000;
const FUZZ_RUNS = atScale(40, 400);
const SEED = suiteSeed();

const valid = (runId: string, input: unknown = { query: 'What is 2+2?', tools: ['calculator'] }) => ({
  v: 1,
  graph: 'react-agent',
  input,
  runId,
});

interface AbuseCase {
  name: string;
  /** The job data as an object, or the exact JSON text written into the job hash. */
  data: unknown;
  raw?: boolean;
  /** The run id the worker derives (undefined: none can be told in advance). */
  runId?: string;
  /** Error code on the run, or null when no run record may exist. */
  code: 'INVALID_INPUT' | 'UNKNOWN_GRAPH' | null;
  /** What the run's error message must name. */
  names?: RegExp;
  /** Where it fails: the intake job, or (input understood only by the graph's node) the first step job. */
  stage?: 'intake' | 'step';
}

const deepArray = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
const protoJson = (runId: string, where: 'top' | 'input') =>
  where === 'top'
    ? `{"v":1,"graph":"react-agent","input":{"query":"hi"},"runId":"${runId}","__proto__":{"tenant":"globex","v":1}}`
    : `{"v":1,"graph":"react-agent","input":{"query":"hi","__proto__":{"tools":["current_time"]}},"runId":"${runId}"}`;

/**
 * Jobs over AGENTQ_MAX_JOB_BYTES (1 MiB by default) are refused before their data is parsed:
 * the message names the size and the limit, not a field (no field was read).
 */
const OVERSIZED = /over the limit of \d+ bytes \(AGENTQ_MAX_JOB_BYTES\)/;

const CASES: AbuseCase[] = [
  { name: 'v: 2', data: { ...valid('ra-v2'), v: 2 }, runId: 'ra-v2', code: 'INVALID_INPUT', names: /v must be 1/ },
  {
    name: 'v: "1" (a string)',
    data: { ...valid('ra-vstr'), v: '1' },
    runId: 'ra-vstr',
    code: 'INVALID_INPUT',
    names: /\bv\b/,
  },
  {
    name: 'no v',
    data: { graph: 'react-agent', input: { query: 'hi' }, runId: 'ra-nov' },
    runId: 'ra-nov',
    code: 'INVALID_INPUT',
    names: /\bv\b/,
  },
  {
    name: 'no graph',
    data: { v: 1, input: { query: 'hi' }, runId: 'ra-nograph' },
    runId: 'ra-nograph',
    code: 'INVALID_INPUT',
    names: /graph/,
  },
  {
    name: 'unknown graph',
    data: { ...valid('ra-unknown'), graph: 'nope' },
    runId: 'ra-unknown',
    code: 'UNKNOWN_GRAPH',
    names: /nope/,
  },
  {
    name: 'graph "__proto__"',
    data: { ...valid('ra-gproto'), graph: '__proto__' },
    runId: 'ra-gproto',
    code: 'UNKNOWN_GRAPH',
    names: /__proto__/,
  },
  {
    name: 'graph "constructor"',
    data: { ...valid('ra-gctor'), graph: 'constructor' },
    runId: 'ra-gctor',
    code: 'UNKNOWN_GRAPH',
    names: /constructor/,
  },
  {
    name: '__proto__ key in the envelope',
    data: protoJson('ra-proto-top', 'top'),
    raw: true,
    runId: 'ra-proto-top',
    code: 'INVALID_INPUT',
    names: /__proto__/,
  },
  {
    name: '__proto__ key in the input',
    data: protoJson('ra-proto-in', 'input'),
    raw: true,
    runId: 'ra-proto-in',
    code: 'INVALID_INPUT',
    names: /__proto__/,
  },
  {
    name: 'constructor.prototype in the input',
    data: valid('ra-ctor-in', { query: 'hi', constructor: { prototype: { polluted: true } } }),
    runId: 'ra-ctor-in',
    code: 'INVALID_INPUT',
    names: /constructor/,
  },
  {
    name: 'tool "__proto__"',
    data: valid('ra-tool-proto', { query: 'hi', tools: ['__proto__'] }),
    runId: 'ra-tool-proto',
    code: 'INVALID_INPUT',
    names: /__proto__/,
    stage: 'step',
  },
  {
    name: '10 MB query',
    data: valid('ra-10mb-query', { query: TEN_MB }),
    runId: 'ra-10mb-query',
    code: 'INVALID_INPUT',
    names: OVERSIZED,
  },
  {
    name: '10 MB system prompt',
    data: valid('ra-10mb-system', { query: 'hi', system: TEN_MB }),
    runId: 'ra-10mb-system',
    code: 'INVALID_INPUT',
    names: OVERSIZED,
  },
  {
    name: '10 MB input string',
    data: valid('ra-10mb-input', TEN_MB),
    runId: 'ra-10mb-input',
    code: 'INVALID_INPUT',
    names: OVERSIZED,
  },
  {
    name: '10 MB graph name',
    data: { ...valid('ra-10mb-graph'), graph: TEN_MB },
    runId: 'ra-10mb-graph',
    code: 'INVALID_INPUT',
    names: OVERSIZED,
  },
  {
    name: '10 MB unknown field',
    data: { ...valid('ra-10mb-extra'), notes: TEN_MB },
    runId: 'ra-10mb-extra',
    code: 'INVALID_INPUT',
    names: OVERSIZED,
  },
  {
    name: '10 MB webhookUrl',
    data: { ...valid('ra-10mb-hook'), webhookUrl: `https://example.com/${TEN_MB}` },
    runId: 'ra-10mb-hook',
    code: 'INVALID_INPUT',
    names: OVERSIZED,
  },
  { name: '10 MB runId', data: { ...valid('x'), runId: TEN_MB }, code: 'INVALID_INPUT', names: OVERSIZED },
  {
    name: '10 MB tenant',
    data: { ...valid('ra-10mb-tenant'), tenant: TEN_MB },
    runId: 'ra-10mb-tenant',
    code: 'INVALID_INPUT',
    names: OVERSIZED,
  },
  {
    name: 'deep nesting in the query (1,000 levels)',
    data: valid('ra-deep-query', { query: JSON.parse(deepArray(1000)) }),
    runId: 'ra-deep-query',
    code: 'INVALID_INPUT',
    names: /input/,
  },
  {
    name: 'deep nesting in options (1,000 levels)',
    data: { ...valid('ra-deep-options'), options: JSON.parse(deepArray(1000)) },
    runId: 'ra-deep-options',
    code: 'INVALID_INPUT',
    names: /options/,
  },
  {
    name: `deep nesting in the input (${DEEP.toLocaleString('en')} levels)`,
    data: `{"v":1,"graph":"react-agent","runId":"ra-deep-input","input":{"query":"hi","extra":${deepArray(DEEP)}}}`,
    raw: true,
    runId: 'ra-deep-input',
    code: 'INVALID_INPUT',
    names: /input/,
  },
  {
    name: `deep nesting in an unknown field (${DEEP.toLocaleString('en')} levels)`,
    data: `{"v":1,"graph":"react-agent","runId":"ra-deep-extra","input":{"query":"hi"},"extra":${deepArray(DEEP)}}`,
    raw: true,
    runId: 'ra-deep-extra',
    code: 'INVALID_INPUT',
    names: /extra/,
  },
  { name: 'data is a string', data: 'run react-agent please', code: 'INVALID_INPUT' },
  { name: 'data is null', data: null, code: 'INVALID_INPUT' },
  { name: 'data is an array', data: [valid('ra-array')], code: 'INVALID_INPUT' },
  {
    name: 'options with an unknown key',
    data: { ...valid('ra-opt-extra'), options: { maxSteps: 5, priority: 1 } },
    runId: 'ra-opt-extra',
    code: 'INVALID_INPUT',
    names: /priority/,
  },
  {
    name: 'maxSteps 1e12',
    data: { ...valid('ra-maxsteps'), options: { maxSteps: 1e12 } },
    runId: 'ra-maxsteps',
    code: 'INVALID_INPUT',
    names: /maxSteps/,
  },
];

/** One mutation that makes a valid react-agent job invalid: the fuzzed half of the suite. */
const mutation = fc.oneof(
  fc
    .integer()
    .filter((v) => v !== 1)
    .map((v) => ({ v })),
  fc.constantFrom({ v: '1' }, { v: 1.5 }, { v: null }, { v: [1] }),
  fc.oneof(fc.integer(), fc.constant(''), fc.string({ minLength: 129, maxLength: 300 })).map((graph) => ({ graph })),
  fc
    .string({ minLength: 1, maxLength: 30 })
    .filter(
      (key) =>
        ![
          'v',
          'graph',
          'graphVersion',
          'input',
          'runId',
          'idempotencyKey',
          'tenant',
          'options',
          'conversationId',
          'webhookUrl',
        ].includes(key),
    )
    .map((key) => ({ [key]: 1 })),
  fc
    .oneof(
      fc.string({ maxLength: 40 }).filter((id) => !/^[A-Za-z0-9_.-]{1,128}$/.test(id)),
      fc.integer(),
    )
    .map((tenant) => ({ tenant })),
  fc
    .oneof(
      fc.constant(''),
      fc.integer(),
      fc.string({ maxLength: 10 }).map((text) => `${text}:`),
    )
    .map((idempotencyKey) => ({ idempotencyKey })),
  fc
    .oneof(fc.integer({ min: 100_001 }), fc.integer({ max: 0 }), fc.double({ noInteger: true }))
    .map((maxSteps) => ({ options: { maxSteps } })),
  fc
    .oneof(
      fc.string({ maxLength: 30 }).filter((url) => !/^https?:\/\//.test(url)),
      fc.constantFrom('javascript:alert(1)', 'file:///etc/passwd', 'ftp://x'),
    )
    .map((webhookUrl) => ({ webhookUrl })),
  fc
    .oneof(
      fc.constant(''),
      fc.constant('   '),
      fc.integer(),
      fc.jsonValue({ maxDepth: 4 }).filter((value) => typeof value !== 'string'),
    )
    .map((query) => ({ input: { query } })),
  fc
    .array(
      fc.string({ maxLength: 70 }).filter((name) => !/^[A-Za-z0-9_-]{1,64}$/.test(name)),
      { minLength: 1, maxLength: 3 },
    )
    .map((tools) => ({ input: { query: 'hi', tools } })),
  fc
    .dictionary(
      fc.string({ minLength: 1, maxLength: 12 }).filter((key) => !['query', 'system', 'tools'].includes(key)),
      fc.jsonValue({ maxDepth: 3 }),
      { minKeys: 1, maxKeys: 3 },
    )
    .map((extra) => ({ input: { query: 'hi', ...extra } })),
);

describe('raw jobs: malformed and oversized jobs fail at attempt 1 with 0 model calls', () => {
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let intake: Queue;
  let steps: Queue;
  const settled: { name: string; attemptsMade: number; state: string; record: RunRecord | null }[] = [];

  beforeAll(async () => {
    console.log(`raw jobs seed=${SEED} (AGENTQ_SEED=${SEED} replays the fuzzed jobs), ${FUZZ_RUNS} fuzzed jobs`);
    // Any request that reaches the model is answered (and counted): a slip must show as a count, not a hang.
    server = await startScriptedOpenAIServer({ script: () => ({ content: 'I should never have been asked.' }) });
    env = await startTestEnv({
      env: { OPENAI_BASE_URL: server.url, OPENAI_API_KEY: 'test-key', LLM_MODEL: 'scripted-chat' },
    });
    intake = env.queue(INTAKE_QUEUE);
    steps = env.queue(STEP_QUEUE);
  });
  afterAll(async () => {
    await env?.close();
    await server?.close();
  });

  /** Adds the job as another service would (5 attempts, for Redis blips); raw JSON goes into the job hash before it runs. */
  async function addRaw(jobId: string, data: unknown, raw: boolean): Promise<void> {
    const options = { jobId, attempts: 5, backoff: { type: 'fixed', delay: 200 } } as const;
    if (!raw) {
      await intake.add('abuse', data, options);
      return;
    }
    // JSON that JS cannot write (a `__proto__` key kept as data, 100,000 levels): put it in the job hash while the job waits.
    await intake.add('abuse', { placeholder: true }, { ...options, delay: 1500 });
    await env.client.store.redis.hset(`${env.config.queuePrefix}:${INTAKE_QUEUE}:${jobId}`, 'data', data as string);
  }

  it.each(CASES.map((abuse, index) => [abuse.name, abuse, index] as const))('%s', async (_name, abuse, index) => {
    const jobId = `abuse-${index}`;
    await addRaw(jobId, abuse.data, abuse.raw === true);
    const { job, state } = await settledJob(intake, jobId);
    const record = abuse.runId ? await env.client.get(abuse.runId) : null;
    settled.push({ name: abuse.name, attemptsMade: job.attemptsMade, state, record });
    expect(
      job.attemptsMade,
      `${abuse.name}: intake attempts (${job.failedReason}; run ${JSON.stringify(record)?.slice(0, 300)})`,
    ).toBe(1);
    if ((abuse.stage ?? 'intake') === 'intake') {
      expect(state, `${abuse.name}: ${job.failedReason}`).toBe('failed');
      expect(job.failedReason.length).toBeGreaterThan(0);
    } else {
      // Admitted (the envelope is valid); its first step refuses the input before any model call.
      const step = await settledJob(steps, `${abuse.runId}.s0.t0`);
      expect(step.state).toBe('failed');
      expect(step.job.attemptsMade).toBe(1);
    }
    if (abuse.runId) {
      const failed = await eventually(
        async () =>
          (await env.client.get(abuse.runId!))?.status === 'failed' ? env.client.get(abuse.runId!) : undefined,
        15_000,
        `run ${abuse.runId} failed`,
      );
      expect(failed?.error?.code).toBe(abuse.code);
      if (abuse.names) expect(failed?.error?.message).toMatch(abuse.names);
    }
    expect(server.requests.length, `${abuse.name}: requests to the model`).toBe(0);
  });

  it(`${FUZZ_RUNS} fuzzed invalid jobs (one mutation of a valid job each) fail at attempt 1`, async () => {
    let count = 0;
    await fc.assert(
      fc.asyncProperty(mutation, async (change) => {
        count += 1;
        const runId = `ra-fuzz-${count}`;
        const base = valid(runId);
        const data = { ...base, ...change, input: 'input' in change ? change.input : base.input };
        const jobId = `fuzz-${count}`;
        await intake.add('abuse', data, { jobId, attempts: 5, backoff: { type: 'fixed', delay: 200 } });
        const { job, state } = await settledJob(intake, jobId);
        const stepJob = state === 'completed' ? await settledJob(steps, `${runId}.s0.t0`) : undefined;
        const label = `${JSON.stringify(data).slice(0, 300)} → intake ${state} (${job.attemptsMade}), step ${stepJob?.state ?? '-'}`;
        if (
          job.attemptsMade !== 1 ||
          (state === 'completed' && (stepJob?.state !== 'failed' || stepJob.job.attemptsMade !== 1))
        )
          throw new Error(`not failed at attempt 1: ${label}`);
        if (server.requests.length > 0) throw new Error(`a model request for ${label}`);
        settled.push({ name: `fuzz ${count}`, attemptsMade: job.attemptsMade, state, record: null });
      }),
      { seed: SEED, numRuns: FUZZ_RUNS },
    );
    expect(count).toBe(FUZZ_RUNS);
  });

  it('every run record the abuse made is failed, readable, with an error code', async () => {
    const redis = env.client.store.redis;
    const runIds = new Set<string>();
    for (const key of await redis.keys(`${env.config.keyPrefix}:t:*:runs`))
      for (const id of await redis.zrange(key, '0', '-1')) runIds.add(id);
    expect(runIds.size).toBeGreaterThan(0);
    const notFailed: string[] = [];
    for (const id of runIds) {
      const record = await env.client.get(id);
      if (record?.status !== 'failed' || !record.error?.code || !record.error.message)
        notFailed.push(`${id}: ${JSON.stringify(record).slice(0, 200)}`);
    }
    expect(notFailed).toEqual([]);
    recordFigure({
      scenario: 'raw jobs',
      name: 'jobs_added',
      value: settled.length,
      goal: `${CASES.length} cases + ${FUZZ_RUNS} fuzzed`,
    });
    recordFigure({
      scenario: 'raw jobs',
      name: 'failed_at_attempt_1',
      value: settled.filter((entry) => entry.attemptsMade === 1).length,
      goal: '= jobs_added',
    });
    recordFigure({ scenario: 'raw jobs', name: 'model_calls', value: server.requests.length, goal: '= 0' });
    recordFigure({ scenario: 'raw jobs', name: 'runs_not_failed', value: notFailed.length, goal: '= 0' });
    recordFigure({ scenario: 'raw jobs', name: 'seed', value: SEED });
  });

  it('control: the same worker runs a valid raw job, and the model is asked (the counts above can see a slip)', async () => {
    await intake.add('control', valid('ra-control', { query: 'say hi', tools: [] }), { jobId: 'control', attempts: 5 });
    const done = await env.client.wait(
      (await eventually(() => env.client.get('ra-control').then((record) => record ?? undefined))).id,
      { timeoutMs: 30_000 },
    );
    expect(done.status).toBe('completed');
    expect(server.chatRequests()).toHaveLength(1);
  });
});
