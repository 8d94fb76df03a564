import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEDULES_QUEUE } from '../../shared/contracts/queues.js';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { json, KEYS, startApiTestEnv, type ApiTestEnv } from '../helpers/api-test-env.js';
import { eventually } from '../helpers/test-env.js';

type Schedule = {
  id: string;
  tenant: string;
  paused: boolean;
  nextRunAt: string | null;
  lastRun: { runId: string; scheduledFor: string } | null;
  everyMs?: number;
  cron?: string;
  tz?: string;
  input: unknown;
};

/** Scheduled runs through the HTTP API, with a worker that turns ticks into runs. */
describe('HTTP API: schedules', () => {
  let env: ApiTestEnv;
  let ticks: Queue;
  beforeAll(async () => {
    env = await startApiTestEnv({ graphs: [echoRagGraph()] });
    ticks = new Queue(SCHEDULES_QUEUE, {
      connection: { url: env.config.redisUrl!, maxRetriesPerRequest: null },
      prefix: env.config.queuePrefix,
    });
  });
  afterAll(async () => {
    await ticks.close();
    await env.close();
  });

  const call = (key: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) =>
    env.as(key, { method, url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });

  it('an everyMs schedule starts one run per tick; each run links back; the schedule shows its last and next runs', async () => {
    const created = await call(KEYS.acmeProducer, 'POST', '/v1/schedules', {
      graph: 'chain',
      input: { steps: 1 },
      everyMs: 1000,
      name: 'every second',
    });
    expect(created.statusCode).toBe(201);
    const schedule = json<Schedule>(created);
    expect(created.headers.location).toBe(`/v1/schedules/${schedule.id}`);
    expect(schedule).toMatchObject({ tenant: 'acme', paused: false, everyMs: 1000, lastRun: null });
    expect(schedule.nextRunAt).not.toBeNull();

    await eventually(
      async () =>
        json<{ runs: unknown[] }>(await call(KEYS.acmeProducer, 'GET', `/v1/schedules/${schedule.id}/runs`)).runs
          .length >= 3,
      20_000,
      'three ticks',
    );
    const { runs } = json<{ runs: { runId: string; scheduledFor: string; status: string | null }[] }>(
      await call(KEYS.acmeProducer, 'GET', `/v1/schedules/${schedule.id}/runs`),
    );
    // One run per tick: distinct tick times, a second apart (newest first).
    const times = runs.map((run) => Date.parse(run.scheduledFor));
    expect(new Set(times).size).toBe(times.length);
    for (let i = 1; i < times.length; i++) expect(times[i - 1]! - times[i]!).toBe(1000);
    for (const run of runs.slice(1)) {
      const record = await env.client.wait(run.runId);
      expect(record).toMatchObject({ status: 'completed', tenant: 'acme', scheduleId: schedule.id });
    }
    const fetched = json<Schedule>(await call(KEYS.acmeProducer, 'GET', `/v1/schedules/${schedule.id}`));
    expect(fetched.lastRun?.runId).toBeDefined();
    expect(Date.parse(fetched.nextRunAt!)).toBeGreaterThan(Date.parse(fetched.lastRun!.scheduledFor));
    // The run record over the API says which schedule started it.
    const runRecord = json(await call(KEYS.acmeProducer, 'GET', `/v1/runs/${runs[1]!.runId}`));
    expect(runRecord.scheduleId).toBe(schedule.id);

    expect((await call(KEYS.acmeProducer, 'DELETE', `/v1/schedules/${schedule.id}`)).statusCode).toBe(204);
    expect((await call(KEYS.acmeProducer, 'GET', `/v1/schedules/${schedule.id}`)).statusCode).toBe(404);
    expect(await ticks.getJobScheduler(schedule.id)).toBeUndefined();
  });

  it('pause stops the ticks, resume starts them again; a change to the input applies from the next tick', async () => {
    const schedule = json<Schedule>(
      await call(KEYS.acmeProducer, 'POST', '/v1/schedules', {
        graph: 'chain',
        input: { steps: 1 },
        cron: '* * * * * *',
      }),
    );
    await eventually(
      async () => (await env.client.schedules.runs(schedule.id, { tenant: 'acme' }))!.length >= 1,
      15_000,
      'a first tick',
    );
    const paused = json<Schedule>(
      await call(KEYS.acmeProducer, 'PATCH', `/v1/schedules/${schedule.id}`, { paused: true }),
    );
    expect(paused).toMatchObject({ paused: true, nextRunAt: null });
    expect(await ticks.getJobScheduler(schedule.id)).toBeUndefined();
    // A tick already due when it was paused starts nothing; wait out one and count.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const whilePaused = (await env.client.schedules.runs(schedule.id, { tenant: 'acme' }))!.length;
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect((await env.client.schedules.runs(schedule.id, { tenant: 'acme' }))!.length).toBe(whilePaused);

    const resumed = json<Schedule>(
      await call(KEYS.acmeProducer, 'PATCH', `/v1/schedules/${schedule.id}`, { paused: false, input: { steps: 2 } }),
    );
    expect(resumed).toMatchObject({ paused: false, input: { steps: 2 } });
    expect(resumed.nextRunAt).not.toBeNull();
    await eventually(
      async () => (await env.client.schedules.runs(schedule.id, { tenant: 'acme' }))!.length > whilePaused,
      15_000,
      'a tick after resume',
    );
    const [latest] = (await env.client.schedules.runs(schedule.id, { tenant: 'acme' }))!;
    expect((await env.client.wait(latest!.runId)).stepCount).toBe(2);
    await call(KEYS.acmeProducer, 'DELETE', `/v1/schedules/${schedule.id}`);
  });

  it("a tenant never sees nor changes another tenant's schedules", async () => {
    const theirs = json<Schedule>(
      await call(KEYS.globexProducer, 'POST', '/v1/schedules', {
        graph: 'chain',
        input: {},
        cron: '0 9 * * 1-5',
        tz: 'Europe/Berlin',
        paused: true,
      }),
    );
    expect(theirs).toMatchObject({ tenant: 'globex', paused: true, tz: 'Europe/Berlin' });
    for (const [method, url, payload] of [
      ['GET', `/v1/schedules/${theirs.id}`],
      ['GET', `/v1/schedules/${theirs.id}/runs`],
      ['PATCH', `/v1/schedules/${theirs.id}`, { paused: false }],
      ['DELETE', `/v1/schedules/${theirs.id}`],
    ] as const) {
      const response = await call(KEYS.acmeProducer, method, url, payload);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
    }
    const mine = json<{ schedules: Schedule[] }>(await call(KEYS.acmeProducer, 'GET', '/v1/schedules'));
    expect(mine.schedules.map((schedule) => schedule.id)).not.toContain(theirs.id);
    const still = json<Schedule>(await call(KEYS.globexProducer, 'GET', `/v1/schedules/${theirs.id}`));
    expect(still.paused).toBe(true);
    expect(
      json<{ schedules: Schedule[] }>(await call(KEYS.globexProducer, 'GET', '/v1/schedules')).schedules.map(
        (schedule) => schedule.id,
      ),
    ).toContain(theirs.id);
  });

  it.each([
    [{ graph: 'chain', input: {}, cron: 'every monday' }, 'cron'],
    [{ graph: 'chain', input: {}, cron: '61 * * * *' }, 'cron'],
    [{ graph: 'chain', input: {}, cron: '0 9 * * *', tz: 'Mars/Olympus' }, 'tz'],
    [{ graph: 'chain', input: {} }, 'cron'],
    [{ graph: 'chain', input: {}, cron: '0 9 * * *', everyMs: 60000 }, 'everyMs'],
    [{ graph: 'chain', input: {}, everyMs: 10 }, 'everyMs'],
    [{ graph: 'chain', input: {}, everyMs: 60000, tz: 'UTC' }, 'tz'],
    [
      { graph: 'chain', input: {}, everyMs: 60000, startAt: '2027-01-02T00:00:00Z', endAt: '2027-01-01T00:00:00Z' },
      'endAt',
    ],
    [{ graph: 'chain', input: {}, everyMs: 60000, startAt: 'tomorrow' }, 'startAt'],
    [{ graph: 'chain', input: {}, everyMs: 60000, priority: 0 }, 'priority'],
    [{ graph: 'no-such-graph', input: {}, everyMs: 60000 }, 'graph'],
    [{ graph: 'chain', input: {}, everyMs: 60000, colour: 'red' }, 'colour'],
  ])('bad input %j is a 400 naming %s', async (body, field) => {
    const response = await call(KEYS.acmeProducer, 'POST', '/v1/schedules', body);
    expect(response.statusCode).toBe(400);
    expect(json<{ error: { message: string } }>(response).error.message).toContain(field);
  });

  it('a bad change is a 400 and leaves the schedule as it was', async () => {
    const schedule = json<Schedule>(
      await call(KEYS.acmeProducer, 'POST', '/v1/schedules', { graph: 'chain', input: {}, everyMs: 3_600_000 }),
    );
    const response = await call(KEYS.acmeProducer, 'PATCH', `/v1/schedules/${schedule.id}`, { cron: 'nonsense' });
    expect(response.statusCode).toBe(400);
    expect(json<{ error: { message: string } }>(response).error.message).toContain('cron');
    const after = json<Schedule>(await call(KEYS.acmeProducer, 'GET', `/v1/schedules/${schedule.id}`));
    expect(after).toMatchObject({ everyMs: 3_600_000, paused: false });
    expect(after.cron).toBeUndefined();
    // Switching to cron drops everyMs.
    const switched = json<Schedule>(
      await call(KEYS.acmeProducer, 'PATCH', `/v1/schedules/${schedule.id}`, {
        cron: '30 8 * * *',
        tz: 'America/New_York',
      }),
    );
    expect(switched).toMatchObject({ cron: '30 8 * * *', tz: 'America/New_York' });
    expect(switched.everyMs).toBeUndefined();
    expect(new Date(switched.nextRunAt!).getUTCMinutes()).toBe(30);
    await call(KEYS.acmeProducer, 'DELETE', `/v1/schedules/${schedule.id}`);
  });
});
