import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

describe('the agentq CLI', () => {
  let env: TestEnv;
  const cli = (...args: string[]) => runCli(args, cliEnv(env.config));

  beforeAll(async () => {
    env = await startTestEnv();
  });
  afterAll(async () => env.close());

  it('run --wait --json prints only the final run record on stdout, and status/steps agree', async () => {
    const run = await cli('run', 'chain', '--input', '{"steps": 3}', '--wait', '--json');
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(record).toMatchObject({
      status: 'completed',
      graph: 'chain',
      graphVersion: '1',
      stepCount: 3,
      output: { visited: [0, 1, 2] },
      error: null,
    });
    expect(Object.keys(record).sort()).toEqual([
      'createdAt',
      'error',
      // A finished run's record says when it finished (a bulk retry names the failure it matched by it).
      'finishedAt',
      'graph',
      'graphVersion',
      'id',
      'interrupt',
      'output',
      'status',
      'stepCount',
      'tenant',
      'updatedAt',
      'usage',
    ]);

    const status = await cli('status', record.id, '--json');
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toEqual(record);

    const steps = await cli('steps', record.id, '--json');
    const list = JSON.parse(steps.stdout);
    expect(
      list.map((step: { index: number; superstep: number; node: string; attempts: number }) => [
        step.index,
        step.superstep,
        step.node,
        step.attempts,
      ]),
    ).toEqual([
      [0, 0, 'step', 1],
      [1, 1, 'step', 1],
      [2, 2, 'step', 1],
    ]);
    expect(Object.keys(list[0]).sort()).toEqual(['attempts', 'endedAt', 'index', 'node', 'startedAt', 'superstep']);

    const runs = await cli('runs', '--status', 'completed', '--json');
    expect(JSON.parse(runs.stdout).runs.map((r: { id: string }) => r.id)).toContain(record.id);
  });

  it('run --json without --wait prints the record as enqueued', async () => {
    const run = await cli('run', 'chain', '--input', '{"steps": 1}', '--json');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'queued', graph: 'chain' });
  });

  it('exits 1 when the run fails, with the error in the record', async () => {
    const run = await cli('run', 'chain', '--input', '{"steps": 0}', '--wait', '--json');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'failed', error: { code: 'INVALID_INPUT' } });
  });

  it('cancel ends a running run and exits 0; status then exits 1', async () => {
    const run = await cli('run', 'chain', '--input', '{"steps": 5, "sleepMs": 2000}', '--json');
    const { id } = JSON.parse(run.stdout);
    const cancel = await cli('cancel', id, '--json');
    expect(cancel.code).toBe(0);
    const waited = await cli('wait', id, '--json');
    expect(waited.code).toBe(1);
    expect(JSON.parse(waited.stdout).status).toBe('cancelled');
  });

  it('exits 2 on usage errors, with a message that says what to fix', async () => {
    const badJson = await cli('run', 'chain', '--input', '{steps: 3}');
    expect(badJson.code).toBe(2);
    expect(badJson.stdout).toBe('');
    expect(badJson.stderr).toMatch(/--input is not valid JSON/);
    const badId = await cli('run', 'chain', '--input', '{}', '--run-id', 'has:colon');
    expect(badId.code).toBe(2);
    expect(badId.stderr).toMatch(/runId must be 1-128 characters/);
    const unknown = await cli('frobnicate');
    expect(unknown.code).toBe(2);
    const missingArg = await cli('status');
    expect(missingArg.code).toBe(2);
    const badStatus = await cli('runs', '--status', 'sleeping');
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toMatch(/--status must be one of queued, running/);
  });

  it('exits 1 with a clear message for a run that does not exist', async () => {
    const status = await cli('status', 'no-such-run', '--json');
    expect(status.code).toBe(1);
    expect(status.stdout).toBe('');
    expect(status.stderr).toMatch(/NOT_FOUND: run no-such-run not found/);
  });

  it('takes a big input from --input-file FILE or from stdin with --input -, past the 128 KB limit of one argument', async () => {
    // 300 KB of JSON (whitespace is valid JSON): as an argument, spawn fails with "Argument list too long".
    const big = `{"steps": 2${' '.repeat(300 * 1024)}}`;
    const directory = mkdtempSync(join(tmpdir(), 'agentq-cli-input-'));
    try {
      const file = join(directory, 'input.json');
      writeFileSync(file, big);
      const fromFile = await cli('run', 'chain', '--input-file', file, '--wait', '--json');
      expect(fromFile.code, fromFile.stderr).toBe(0);
      expect(JSON.parse(fromFile.stdout)).toMatchObject({ status: 'completed', output: { visited: [0, 1] } });

      const fromStdin = await runCli(['run', 'chain', '--input', '-', '--wait', '--json'], cliEnv(env.config), big);
      expect(fromStdin.code, fromStdin.stderr).toBe(0);
      expect(JSON.parse(fromStdin.stdout)).toMatchObject({ status: 'completed', output: { visited: [0, 1] } });

      const both = await cli('run', 'chain', '--input', '{}', '--input-file', file);
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(/give the input once/);
      const none = await cli('run', 'chain');
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/--input-file <file>/);
      const missing = await cli('run', 'chain', '--input-file', join(directory, 'nope.json'));
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/--input-file .*nope\.json cannot be read/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
