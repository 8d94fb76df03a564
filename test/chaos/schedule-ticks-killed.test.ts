import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../producer/client/agent-client.js';
import { eventually, testConfig } from '../helpers/test-env.js';
import { killHard, spawnWorker, workerEnv } from '../helpers/worker-processes.js';

const EVERY_MS = 5000;

/**
 * Workers die around a schedule's ticks — one after it created the tick's run but
 * before the tick job completed, one as it took the tick, with no worker at all while a tick fell due —
 * and still every tick starts exactly one run: no tick skipped, none doubled.
 */
describe('chaos: workers killed around schedule ticks', () => {
  const workers: ChildProcess[] = [];
  const settings = { AGENTQ_LOCK_DURATION_MS: '2000', AGENTQ_STALLED_INTERVAL_MS: '1000' };
  const config = testConfig(settings);
  const client = new AgentClient({ config });
  const env = workerEnv(config, settings);
  const spawn = async (script: string, extra: Record<string, string> = {}) => {
    const child = await spawnWorker(script, { ...env, ...extra });
    workers.push(child);
    return child;
  };
  const exited = (child: ChildProcess) =>
    new Promise<void>((resolve) =>
      child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
    );
  const stop = async (child: ChildProcess) => {
    child.kill('SIGTERM');
    await exited(child);
  };
  afterAll(async () => {
    await Promise.all(workers.map((worker) => killHard(worker)));
    await client.close();
  });

  it('every tick starts one run, whichever worker dies when', async () => {
    const first = await spawn('test/chaos/chain-worker.ts');
    const killerAfter = await spawn('test/chaos/schedule-tick-kill-worker.ts', { DIE_IN_TICK: 'after' });
    await stop(first); // the killer alone takes the first tick
    const schedule = await client.schedules.create({
      graph: 'chain',
      input: { steps: 1 },
      everyMs: EVERY_MS,
      startAt: new Date(Date.now() + 1000).toISOString(),
    });
    await exited(killerAfter);
    const diedAt = Date.now();
    // It created the first tick's run and died before the tick job completed.
    const [run0] = (await client.schedules.runs(schedule.id))!;
    expect(run0).toBeDefined();
    // No worker at all while the next tick falls due.
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(run0!.scheduledFor) + EVERY_MS + 500 - Date.now())),
    );
    expect(Date.now() - diedAt).toBeGreaterThan(0);
    const second = await spawn('test/chaos/chain-worker.ts');
    await eventually(
      async () => (await client.schedules.runs(schedule.id))!.length >= 2,
      20_000,
      'the tick that fell due while no worker ran',
    );

    // A worker that dies as it takes a tick (BullMQ has queued the next one by then).
    const killerBefore = await spawn('test/chaos/schedule-tick-kill-worker.ts', { DIE_IN_TICK: 'before' });
    await stop(second);
    await exited(killerBefore);
    const countBefore = (await client.schedules.runs(schedule.id))!.length;
    await spawn('test/chaos/chain-worker.ts');
    // The tick it died in (re-delivered after its lock lapsed) and the one after it.
    await eventually(
      async () => (await client.schedules.runs(schedule.id))!.length >= countBefore + 2,
      30_000,
      'the re-delivered tick and the next',
    );
    const recorded = (await client.schedules.runs(schedule.id))!;
    await client.schedules.delete(schedule.id);

    // What the ticks started, by tick time: a tick a grid step (EVERY_MS) after the one before, each once.
    expect(await client.schedules.runs(schedule.id)).toBeNull();
    const { runs } = await client.list({ limit: 200 });
    const scheduled = (await Promise.all(runs.map((run) => client.store.reads.get(run.id)))).filter(
      (meta) => meta?.scheduleId === schedule.id,
    );
    expect(scheduled.length).toBeGreaterThanOrEqual(4);
    const ticks = recorded
      .map((run) => ({ at: Date.parse(run.scheduledFor), runId: run.runId }))
      .sort((a, b) => a.at - b.at);
    expect(new Set(ticks.map((tick) => tick.at)).size).toBe(ticks.length);
    const createdAt = new Map(scheduled.map((meta) => [meta!.id, meta!.createdAt]));
    for (let i = 1; i < ticks.length; i++) {
      const gap = ticks[i]!.at - ticks[i - 1]!.at;
      // The next tick on the grid, unless the one before was taken only after a whole interval without
      // any worker (on a loaded machine a worker start can take that long): BullMQ then coalesces the
      // ticks missed meanwhile into the next one on the grid (docs/guides/schedules-priorities-budgets.md: Schedules) — never a tick off it.
      const takenLate = createdAt.get(ticks[i - 1]!.runId)! - ticks[i - 1]!.at >= EVERY_MS;
      if (takenLate) expect(gap % EVERY_MS, `tick ${i}: on the grid`).toBe(0);
      else expect(gap, `tick ${i}`).toBe(EVERY_MS);
    }
    // Exactly the recorded ticks' runs exist, one each, and every one completes.
    expect(scheduled.map((meta) => meta!.id).sort()).toEqual(recorded.map((run) => run.runId).sort());
    for (const meta of scheduled) expect((await client.wait(meta!.id, { timeoutMs: 30_000 })).status).toBe('completed');
  }, 120_000);
});
