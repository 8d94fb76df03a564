import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { loadScaledMs } from '../helpers/load-scale.js';
import { eventually, startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** `agentq schedule …`: the API's schedule operations from the command line. */
describe('the agentq CLI: schedules', () => {
  let env: TestEnv;
  const cli = (...args: string[]) => runCli(args, cliEnv(env.config));

  beforeAll(async () => {
    env = await startTestEnv();
  });
  afterAll(async () => env.close());

  it('create, show, runs, pause, resume, change, list and delete a schedule', async () => {
    const created = await cli(
      'schedule',
      'create',
      'chain',
      '--every',
      '1000',
      '--input',
      '{"steps": 1}',
      '--name',
      'cli test',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const schedule = JSON.parse(created.stdout) as { id: string; everyMs: number; paused: boolean };
    expect(schedule).toMatchObject({ everyMs: 1000, paused: false, name: 'cli test' });

    await eventually(
      async () => ((await env.client.schedules.runs(schedule.id)) ?? []).length >= 1,
      loadScaledMs(15_000),
      'a tick',
    );
    const runs = await cli('schedule', 'runs', schedule.id);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(/^run_s[0-9a-f]{31} {2}\d{4}-/m);

    const paused = await cli('schedule', 'pause', schedule.id, '--json');
    expect(JSON.parse(paused.stdout)).toMatchObject({ paused: true, nextRunAt: null });
    const resumed = await cli('schedule', 'resume', schedule.id);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`${schedule.id}  active  every 1000 ms  chain`);
    const changed = await cli(
      'schedule',
      'change',
      schedule.id,
      '--cron',
      '0 9 * * 1-5',
      '--tz',
      'Europe/Berlin',
      '--json',
    );
    expect(JSON.parse(changed.stdout)).toMatchObject({ cron: '0 9 * * 1-5', tz: 'Europe/Berlin' });
    const list = await cli('schedule', 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(`${schedule.id}  active  cron '0 9 * * 1-5' Europe/Berlin  chain`);

    expect((await cli('schedule', 'delete', schedule.id)).stdout).toContain('deleted');
    const gone = await cli('schedule', 'show', schedule.id);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('NOT_FOUND');
  });

  it('a bad cron or time zone is a usage error (exit 2) naming the field', async () => {
    const cron = await cli('schedule', 'create', 'chain', '--cron', 'at nine');
    expect(cron.code).toBe(2);
    expect(cron.stderr).toContain('cron');
    const tz = await cli('schedule', 'create', 'chain', '--cron', '0 9 * * *', '--tz', 'Berlin/Mars');
    expect(tz.code).toBe(2);
    expect(tz.stderr).toContain("tz: 'Berlin/Mars' is not an IANA time zone");
  });
});
