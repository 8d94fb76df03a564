import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentqError } from '../../shared/contracts/errors.js';
import type { RunRecord } from '../../shared/contracts/run-record.js';
import { channel } from '../../shared/graph/channels.js';
import { defineGraph } from '../../shared/graph/define-graph.js';
import { END, START } from '../../shared/graph/graph.js';
import { STEP_QUEUE } from '../../shared/contracts/queues.js';
import { ChildLinks } from '../../shared/store/child-links.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { childDoubleGraph, parentSumGraph } from '../helpers/child-run-graphs.js';
import { eventually } from '../helpers/test-env.js';
import { waiterGraph } from '../helpers/waiter-graph.js';

/** Gates the `gate` graph's runs wait behind, by run id: the test opens them. */
const gates = new Map<string, () => void>();
const entered = new Set<string>();

/** `gate`: one node that waits until the test opens its run's gate, then completes. */
const gateGraph = defineGraph({
  name: 'gate',
  input: undefined,
  state: { opened: channel.replace(false) },
  output: (state) => ({ opened: state.opened }),
})
  .node('hold', async (_state, context) => {
    await new Promise<void>((resolve) => {
      gates.set(context.runId, resolve);
      entered.add(context.runId);
    });
    return { opened: true };
  })
  .edge(START, 'hold')
  .edge('hold', END)
  .build();

const failedOnce = new Set<string>();

/** `flaky`: its first attempt fails with PROVIDER_ERROR (one attempt); retried, it waits at its gate like `gate`. */
const flakyGraph = defineGraph({ name: 'flaky', input: undefined, state: { opened: channel.replace(false) } })
  .node(
    'call',
    async (_state, context) => {
      if (!failedOnce.has(context.runId)) {
        failedOnce.add(context.runId);
        throw new AgentqError('PROVIDER_ERROR', 'the provider is down');
      }
      await new Promise<void>((resolve) => {
        gates.set(context.runId, resolve);
        entered.add(context.runId);
      });
      return { opened: true };
    },
    { retry: { maxAttempts: 1 } },
  )
  .edge(START, 'call')
  .edge('call', END)
  .build();

/**
 * Runs cancelled by filter, through the client and `POST /v1/runs/cancel`, against a real worker: each
 * run through the single-run cancel, none counted twice, a run that finishes meanwhile left as it ended.
 */
describe('bulk cancel', () => {
  let env: ApiTestEnv;
  let links: ChildLinks;
  beforeAll(async () => {
    env = await startApiTestEnv({
      graphs: [gateGraph, flakyGraph, waiterGraph(), childDoubleGraph(), parentSumGraph()],
      // Runs of a graph no worker serves stay queued (their intake waits for one): the queued runs here.
      env: { AGENTQ_UNSERVED_GRAPH_WAIT_MS: '600000', AGENTQ_CHILD_RUN_PARK_MS: '600000' },
    });
    links = new ChildLinks(env.client.store.redis, env.client.store.keys);
  });
  afterAll(async () => env?.close());

  const status = async (runId: string) => (await env.client.get(runId))?.status;
  const queued = (graph: string) => env.client.enqueue({ graph, input: null }, { queueUnserved: true });
  /** The run's step jobs still in its step queue: none once it ended. */
  const stepJobsLeft = async (runId: string) => {
    const jobs = await env.queue(STEP_QUEUE, runId).getJobs(['waiting', 'delayed', 'prioritized', 'active']);
    return jobs.filter((job) => job.id?.startsWith(runId)).length;
  };

  it('cancels queued, parked and waiting runs, oldest first; a run that finishes meanwhile stays completed; nothing is left parked', async () => {
    const parked = await env.client.enqueue({ graph: 'waiter', input: { name: 'never' } });
    await eventually(async () =>
      (await env.client.store.eventLog.events(parked.id)).some((event) => event.type === 'step-parked'),
    );
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns: [3], mode: 'ask' } });
    const child = await eventually(async () => (await links.list(parent.id)).children[0], 15_000, 'the child');
    await eventually(async () => (await status(child.runId)) === 'waiting', 15_000, 'the child waiting');
    await eventually(async () => (await links.waiting(parent.id, 's0.t0')) === 1, 15_000, 'the parent parked');
    const waiting = [await queued('later'), await queued('later')];
    const finishing = await env.client.enqueue({ graph: 'gate', input: null });
    await eventually(async () => entered.has(finishing.id), 15_000, 'the gate run running');
    expect(await status(finishing.id)).toBe('running');

    const progress: string[] = [];
    const summary = await env.client.cancelRuns(
      { status: ['queued', 'running', 'waiting'] },
      {
        ratePerSecond: 1000,
        // After the first cancel, the last run listed finishes before its turn comes.
        onProgress: async ({ runId, outcome }) => {
          progress.push(`${runId} ${outcome}`);
          if (progress.length > 1) return;
          gates.get(finishing.id)!();
          await env.client.wait(finishing.id, { timeoutMs: 15_000 });
        },
      },
    );
    const order = [parked.id, parent.id, child.runId, waiting[0]!.id, waiting[1]!.id, finishing.id];
    expect(summary).toMatchObject({ dryRun: false, matched: 6, runs: order, cancelling: [], errors: [] });
    // The parent's end cancelled its awaited child before the child's turn.
    expect(summary.cancelled).toEqual([parked.id, parent.id, waiting[0]!.id, waiting[1]!.id]);
    expect(summary.skipped).toEqual([
      { runId: child.runId, reason: 'already cancelled' },
      { runId: finishing.id, reason: 'already completed' },
    ]);
    expect(progress).toHaveLength(6);
    expect(await env.client.get(finishing.id)).toMatchObject({ status: 'completed', output: { opened: true } });
    // A queued run's start job is left to the workers, which drop it when they take it: here it waits
    // for a worker serving its graph, so it is woken now.
    for (const run of waiting) {
      const jobs = await env.queue(STEP_QUEUE, run.id).getJobs(['delayed']);
      for (const job of jobs.filter((each) => each.id?.startsWith(run.id))) await job.promote();
      await eventually(async () => (await stepJobsLeft(run.id)) === 0, 15_000, 'the start job taken and dropped');
    }
    for (const runId of order.slice(0, 5)) {
      expect(await env.client.get(runId)).toMatchObject({ status: 'cancelled', error: { code: 'CANCELLED' } });
      expect(await stepJobsLeft(runId)).toBe(0);
    }
    // No run holds a slot of the tenant's in-flight cap any more.
    expect(await env.client.store.redis.zcard(env.client.store.keys.tenantInflight(env.config.tenant))).toBe(0);
  });

  it('two racing bulk cancels cancel each run once between them; a third finds nothing', async () => {
    const runs = await Promise.all(Array.from({ length: 6 }, () => queued('race')));
    const [first, second] = await Promise.all([
      env.client.cancelRuns({ status: 'queued', graph: 'race' }, { ratePerSecond: 200 }),
      env.client.cancelRuns({ status: 'queued', graph: 'race' }, { ratePerSecond: 200 }),
    ]);
    const cancelled = [...first.cancelled, ...second.cancelled].sort();
    expect(cancelled).toEqual(runs.map((run) => run.id).sort());
    expect(first.skipped.length + second.skipped.length).toBe(12 - cancelled.length);
    expect([...first.errors, ...second.errors]).toEqual([]);
    expect(await env.client.cancelRuns({ status: 'queued', graph: 'race' }, {})).toMatchObject({ matched: 0 });
  });

  it('a run in flight matches `error` by the failure it was retried from; a run without one does not', async () => {
    const flaky = await env.client.enqueue({ graph: 'flaky', input: null });
    expect((await env.client.wait(flaky.id, { timeoutMs: 15_000 })).error?.code).toBe('PROVIDER_ERROR');
    await env.client.retry(flaky.id);
    await eventually(async () => entered.has(flaky.id), 15_000, 'the retried run running');
    const plain = await env.client.enqueue({ graph: 'gate', input: null });
    await eventually(async () => entered.has(plain.id), 15_000, 'the gate run running');
    const byError = (errorCode: string) =>
      env.client.cancelRuns({ status: 'running', errorCode }, { dryRun: true }).then((summary) => summary.runs);
    expect(await byError('PROVIDER_ERROR')).toEqual([flaky.id]);
    expect(await byError('TOOL_ERROR')).toEqual([]);
    const summary = await env.client.cancelRuns({ status: 'running', errorCode: 'PROVIDER_ERROR' }, {});
    // Its node in flight: the worker aborts it and ends the run at once, or at its step boundary.
    expect([...summary.cancelled, ...summary.cancelling]).toEqual([flaky.id]);
    for (const run of [flaky, plain]) gates.get(run.id)!();
    expect((await env.client.wait(flaky.id, { timeoutMs: 15_000 })).status).toBe('cancelled');
    expect((await env.client.wait(plain.id, { timeoutMs: 15_000 })).status).toBe('completed');
  });

  const post = (key: string, payload: Record<string, unknown>) =>
    env.as(key, { method: 'POST', url: '/v1/runs/cancel', payload });
  const enqueueAs = async (key: string, graph: string) =>
    json<RunRecord>(
      await env.as(key, { method: 'POST', url: '/v1/runs?queueUnserved=true', payload: { graph, input: null } }),
    );

  it('POST /v1/runs/cancel: a dry run changes nothing and counts right; graph and status pick; a key of one tenant cannot cancel another’s runs', async () => {
    const acme = [await enqueueAs(KEYS.acmeProducer, 'nightly'), await enqueueAs(KEYS.acmeProducer, 'nightly')];
    const otherGraph = await enqueueAs(KEYS.acmeProducer, 'hourly');
    const globex = await enqueueAs(KEYS.globexProducer, 'nightly');
    const running = await env.as(KEYS.acmeProducer, {
      method: 'POST',
      url: '/v1/runs',
      payload: { graph: 'gate', input: null },
    });
    const gateRun = json<RunRecord>(running);
    await eventually(async () => entered.has(gateRun.id), 15_000, 'the gate run running');

    const dry = await post(KEYS.acmeProducer, { status: ['queued', 'running'], graph: 'nightly', dryRun: true });
    expect(dry.statusCode).toBe(200);
    expect(json(dry)).toMatchObject({ dryRun: true, matched: 2, runs: acme.map((run) => run.id), cancelled: [] });
    for (const run of [...acme, otherGraph, globex]) expect(await status(run.id)).toBe('queued');
    // Created before an hour ago: none; before a time to come: all.
    expect(
      json(await post(KEYS.acmeProducer, { status: 'queued', graph: 'nightly', until: '1h', dryRun: true })),
    ).toMatchObject({ matched: 0 });
    const later = new Date(Date.now() + 60_000).toISOString();
    expect(
      json(await post(KEYS.acmeProducer, { status: 'queued', graph: 'nightly', until: later, dryRun: true })),
    ).toMatchObject({ matched: 2 });

    const foreign = await post(KEYS.globexProducer, { status: ['queued', 'running'] });
    expect(json(foreign)).toMatchObject({ matched: 1, cancelled: [globex.id] });
    for (const run of [...acme, otherGraph]) expect(await status(run.id)).toBe('queued');
    expect(await status(gateRun.id)).toBe('running');

    const done = await post(KEYS.acmeProducer, { status: 'queued', graph: 'nightly', since: '1h' });
    expect(json(done)).toMatchObject({ matched: 2, cancelled: acme.map((run) => run.id), skipped: [], errors: [] });
    for (const run of acme) expect(await status(run.id)).toBe('cancelled');
    expect(await status(otherGraph.id)).toBe('queued');
    // Running, its node in flight: aborted, the run ends cancelled at once or at its step boundary.
    const cancelRunning = json<{ cancelled: string[]; cancelling: string[] }>(
      await post(KEYS.acmeProducer, { status: 'running' }),
    );
    expect([...cancelRunning.cancelled, ...cancelRunning.cancelling]).toEqual([gateRun.id]);
    gates.get(gateRun.id)!();
    expect((await env.client.wait(gateRun.id, { timeoutMs: 15_000 })).status).toBe('cancelled');
    expect(json(await post(KEYS.acmeProducer, { status: 'queued', graph: 'nightly' }))).toMatchObject({ matched: 0 });
  });

  it('POST /v1/runs/cancel refuses a body without a status, or with a status a run cannot be cancelled in', async () => {
    for (const payload of [
      { graph: 'nightly' },
      { status: 'completed' },
      { status: [] },
      { status: 'queued', until: 'soon' },
    ]) {
      const refused = await post(KEYS.acmeProducer, payload);
      expect(refused.statusCode, JSON.stringify(payload)).toBe(400);
      expect(json<{ error: { code: string } }>(refused).error.code).toBe('INVALID_INPUT');
    }
    const badUntil = await post(KEYS.acmeProducer, { status: 'queued', until: 'soon' });
    expect(json<{ error: { message: string } }>(badUntil).error.message).toContain("until 'soon'");
  });
});
