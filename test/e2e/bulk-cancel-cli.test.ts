import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CancelRunsSummary } from '../../producer/client/cancel-runs.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { Calls, threeStepGraph } from '../helpers/test-graphs.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** `agentq cancel` by filter, a spawned CLI against a real worker; `agentq cancel <runId>` as before. */
describe('agentq cancel in bulk', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await startTestEnv({
      graphs: [threeStepGraph(new Calls(), new Set())],
      // Runs of a graph no worker serves stay queued (their intake waits for one).
      env: { AGENTQ_UNSERVED_GRAPH_WAIT_MS: '600000' },
    });
  });
  afterAll(async () => env?.close());

  const cli = (args: string[]) => runCli(args, cliEnv(env.config));
  const queued = (graph: string) => env.client.enqueue({ graph, input: null }, { queueUnserved: true });
  const status = async (runId: string) => (await env.client.get(runId))?.status;

  it('--dry-run counts and lists, changing nothing; then cancels that graph’s queued runs only (graph batch-a, not nightly), and a second run finds none', async () => {
    const batch = [await queued('batch-a'), await queued('batch-a'), await queued('batch-a')];
    const other = await queued('nightly');
    const dry = await cli(['cancel', '--status', 'queued', '--graph', 'batch-a', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain('3 runs match (dry run: nothing cancelled)');
    expect(dry.stdout.trim().split('\n')).toEqual(batch.map((run) => run.id));
    for (const run of [...batch, other]) expect(await status(run.id)).toBe('queued');

    const done = await cli([
      'cancel',
      '--status',
      'queued,waiting',
      '--graph',
      'batch-a',
      '--since',
      '10m',
      '--rate',
      '50',
      '--json',
    ]);
    expect(done.code).toBe(0);
    expect(done.stderr).toContain('3 runs match; cancelling at up to 50/s');
    const summary = JSON.parse(done.stdout) as CancelRunsSummary;
    expect(summary).toMatchObject({ matched: 3, cancelled: batch.map((run) => run.id), skipped: [], errors: [] });
    for (const run of batch) expect(await status(run.id)).toBe('cancelled');
    expect(await status(other.id)).toBe('queued');

    const again = await cli(['cancel', '--status', 'queued', '--graph', 'batch-a']);
    expect(again.stdout).toContain('0 matched: 0 cancelled, 0 cancelling, 0 skipped, 0 errors');
  });

  it('`agentq cancel <runId>` still cancels one run; bulk filters need --status and exclude a run id', async () => {
    const one = await queued('single');
    const single = await cli(['cancel', one.id]);
    expect(single).toMatchObject({ code: 0, stdout: `${one.id} cancelled\n` });

    const usage = [
      ['cancel', '--graph', 'batch-a'],
      ['cancel', '--status', 'completed'],
      ['cancel', one.id, '--status', 'queued'],
      ['cancel', '--status', 'queued', '--until', 'soon'],
    ];
    for (const args of usage) {
      const refused = await cli(args);
      expect(refused.code, args.join(' ')).toBe(2);
    }
    expect((await cli(['cancel', '--status', 'completed'])).stderr).toContain(
      'cancel in bulk takes --status with one or more of queued, running, waiting',
    );
    expect((await cli(['cancel', '--status', 'queued', '--until', 'soon'])).stderr).toContain("--until: until 'soon'");
  });
});
