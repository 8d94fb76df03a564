import { afterEach, describe, expect, it } from 'vitest';
import { rolloutBucket } from '../../shared/store/rollouts/graph-rollouts.js';
import { INTAKE_QUEUE } from '../../shared/contracts/queues.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { versionEchoGraph } from '../helpers/version-echo-graph.js';

/** A gate the test opens: runs wait at their one node until then, so they are in flight across a change. */
function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

/** Run ids, in order, the first `inRamp` of them with a bucket below `percent` and the rest not. */
function idsAround(prefix: string, percent: number, inRamp: number, outside: number): string[] {
  const inside: string[] = [];
  const rest: string[] = [];
  for (let index = 0; inside.length < inRamp || rest.length < outside; index += 1) {
    const id = `${prefix}-${index}`;
    if (rolloutBucket(id) < percent) {
      if (inside.length < inRamp) inside.push(id);
    } else if (rest.length < outside) rest.push(id);
  }
  return [...inside, ...rest];
}

/**
 * A graph's rollout decides, at creation, which version a run that names none gets: the ramping version
 * when the run id's bucket is below the ramp's percent, else the current one; the version is written in
 * the run's record and is the one a worker runs, whatever changes after.
 */
describe('graph rollout: a current version and a ramping one', () => {
  let env: TestEnv | undefined;
  afterEach(async () => {
    await env?.close();
    env = undefined;
  });

  async function start(held: Promise<void> = Promise.resolve()): Promise<TestEnv> {
    env = await startTestEnv({
      builtInGraphs: false,
      graphs: [versionEchoGraph('greet', '1', held), versionEchoGraph('greet', '2', held)],
      concurrency: 8,
    });
    return env;
  }

  it('with version 2 ramping at 10 %, a new run gets version 2 exactly when its id hashes below 10, and runs it', async () => {
    const { client } = await start();
    const set = await client.rollouts.set('greet', { current: '1', ramp: '2', percent: 10 });
    expect(set).toMatchObject({ graph: 'greet', current: '1', ramp: { version: '2', percent: 10 } });
    const ids = idsAround('ten', 10, 4, 16);
    const created = [];
    for (const id of ids) created.push(await client.enqueue({ graph: 'greet', runId: id, input: {} }));
    const expected = ids.map((id) => (rolloutBucket(id) < 10 ? '2' : '1'));
    expect(expected.filter((version) => version === '2')).toHaveLength(4);
    // Written at creation, before any worker took the run in.
    expect(created.map((record) => record.graphVersion)).toEqual(expected);
    const done = await Promise.all(ids.map((id) => client.wait(id, { timeoutMs: 30_000 })));
    expect(done.map((record) => record.output)).toEqual(expected);
    expect(done.map((record) => record.graphVersion)).toEqual(expected);
  });

  it('a raw job that names no version is assigned by the rollout too, as the intake creates its run', async () => {
    const { client } = await start();
    await client.rollouts.set('greet', { current: '1', ramp: '2', percent: 10 });
    const ids = idsAround('raw', 10, 2, 3);
    const intake = env!.queue(INTAKE_QUEUE);
    for (const id of ids) await intake.add('run', { v: 1, graph: 'greet', runId: id, input: {} });
    for (const id of ids) await eventually(async () => (await client.get(id)) ?? undefined, 30_000, `run ${id}`);
    const done = await Promise.all(ids.map((id) => client.wait(id, { timeoutMs: 30_000 })));
    const expected = ids.map((id) => (rolloutBucket(id) < 10 ? '2' : '1'));
    expect(done.map((record) => record.graphVersion)).toEqual(expected);
    expect(done.map((record) => record.output)).toEqual(expected);
  });

  it('runs in flight keep their version through a promote and a rollback; new runs follow each change', async () => {
    const held = gate();
    const { client } = await start(held.wait);
    await client.rollouts.set('greet', { current: '1', ramp: '2', percent: 50 });
    const [rampId, currentId] = idsAround('flight', 50, 1, 1);
    const ramped = await client.enqueue({ graph: 'greet', runId: rampId!, input: {} });
    const current = await client.enqueue({ graph: 'greet', runId: currentId!, input: {} });
    expect([ramped.graphVersion, current.graphVersion]).toEqual(['2', '1']);

    expect(await client.rollouts.promote('greet')).toMatchObject({ current: '2', ramp: null });
    const afterPromote = await client.enqueue({
      graph: 'greet',
      runId: idsAround('promoted', 50, 0, 1)[0]!,
      input: {},
    });
    expect(afterPromote.graphVersion).toBe('2');

    expect(await client.rollouts.rollback('greet', { current: '1' })).toMatchObject({ current: '1', ramp: null });
    const afterRollback = await client.enqueue({ graph: 'greet', runId: idsAround('back', 50, 1, 0)[0]!, input: {} });
    expect(afterRollback.graphVersion).toBe('1');

    held.open();
    const done = await Promise.all(
      [ramped, current, afterPromote, afterRollback].map((run) => client.wait(run.id, { timeoutMs: 30_000 })),
    );
    expect(done.map((record) => record.output)).toEqual(['2', '1', '2', '1']);
  });

  it('a run that names its graphVersion keeps it, whatever the ramp says', async () => {
    const { client } = await start();
    await client.rollouts.set('greet', { current: '1', ramp: '2', percent: 100 });
    const [inRamp] = idsAround('pinned', 100, 1, 0);
    const pinned = await client.enqueue({ graph: 'greet', graphVersion: '1', runId: inRamp!, input: {} });
    expect(pinned.graphVersion).toBe('1');
    expect((await client.wait(pinned.id, { timeoutMs: 30_000 })).output).toBe('1');
  });

  it('a paused ramp sends no new run to its version; setting its percent again resumes it', async () => {
    const { client } = await start();
    await client.rollouts.set('greet', { current: '1', ramp: '2', percent: 30 });
    expect(await client.rollouts.pause('greet')).toMatchObject({ current: '1', ramp: { version: '2', percent: 0 } });
    const ids = idsAround('paused', 30, 3, 3);
    const paused = await Promise.all(ids.map((id) => client.enqueue({ graph: 'greet', runId: id, input: {} })));
    expect(paused.map((record) => record.graphVersion)).toEqual(ids.map(() => '1'));
    await client.rollouts.set('greet', { percent: 30 });
    const resumed = await client.enqueue({ graph: 'greet', runId: idsAround('resumed', 30, 1, 0)[0]!, input: {} });
    expect(resumed.graphVersion).toBe('2');
  });

  it('refuses a version no live worker serves (ROLLOUT_VERSION_UNSERVED) and leaves the rollout as it was', async () => {
    const { client } = await start();
    await client.rollouts.set('greet', { current: '1' });
    const refused = await client.rollouts.set('greet', { ramp: '3', percent: 10 }).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: 'ROLLOUT_VERSION_UNSERVED',
      details: { graphVersion: '3', served: ['1', '2'] },
    });
    expect((refused as Error).message).toMatch(/no live worker serves graph greet@3.*served versions of greet: 1, 2/);
    const unchanged = await client.rollouts.get('greet');
    expect(unchanged).toMatchObject({ current: '1', ramp: null });
    const unservedCurrent = await client.rollouts.rollback('greet', { current: '7' }).catch((error: unknown) => error);
    expect(unservedCurrent).toMatchObject({ code: 'ROLLOUT_VERSION_UNSERVED' });
  });

  it('refuses what needs a ramp or a current version that is not there (CONFLICT), and a ramp equal to the current', async () => {
    const { client } = await start();
    await expect(client.rollouts.promote('greet')).rejects.toMatchObject({ code: 'CONFLICT' });
    await expect(client.rollouts.set('greet', { ramp: '2', percent: 10 })).rejects.toMatchObject({
      code: 'CONFLICT',
      message: expect.stringMatching(/no current version to ramp from/),
    });
    await expect(client.rollouts.set('greet', { current: '2', ramp: '2' })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    await expect(client.rollouts.set('greet', { current: '1', ramp: '2', percent: 101 })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
    expect(await client.rollouts.list()).toEqual([]);
  });

  it('without a rollout a new run names no version until a worker takes it in (as before); clear returns there', async () => {
    const { client } = await start();
    const before = await client.enqueue({ graph: 'greet', input: {} });
    expect(before.graphVersion).toBeNull();
    await client.rollouts.set('greet', { current: '1' });
    expect((await client.enqueue({ graph: 'greet', input: {} })).graphVersion).toBe('1');
    expect(await client.rollouts.clear('greet')).toBe(true);
    expect((await client.enqueue({ graph: 'greet', input: {} })).graphVersion).toBeNull();
    // The worker's latest registration ran the unpinned run.
    expect((await client.wait(before.id, { timeoutMs: 30_000 })).output).toBe('2');
  });
});
