import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { echoRagGraph } from '../helpers/echo-rag-graph.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

describe('agentq batch', () => {
  let env: TestEnv;
  const dir = mkdtempSync(join(tmpdir(), 'agentq-batch-'));
  beforeAll(async () => {
    env = await startTestEnv({ graphs: [echoRagGraph()] });
  });
  afterAll(async () => {
    await env.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runCli(args, cliEnv(env.config));

  it('answers a JSONL file into --out and prints a JSON summary on stdout', async () => {
    const questions = join(dir, 'questions.jsonl');
    writeFileSync(questions, '{"id":"q1","question":"one"}\n{"id":"q2","question":"two"}\n{"question":"three"}\n');
    const out = join(dir, 'answers.jsonl');
    const result = await cli(
      'batch',
      questions,
      '--collection',
      'docs',
      '--graph',
      'echo-rag',
      '--out',
      out,
      '--poll-ms',
      '100',
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ status: 'completed', progress: { total: 3, completed: 3 }, out });
    const answers = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(answers.map((answer) => [answer.id, answer.answer])).toEqual([
      ['q1', 'echo: one'],
      ['q2', 'echo: two'],
      ['3', 'echo: three'],
    ]);
    const csv = await cli('batch', questions, '--graph', 'echo-rag', '--format', 'csv', '--poll-ms', '100');
    expect(csv.stdout.split('\r\n')[0]).toBe('id,question,status,answer,sources,error_code,error_message,run_id');
  });

  it('--deadline, --budget and --modes plan the batch; batch status shows the estimate beside the actual', async () => {
    const questions = join(dir, 'planned.jsonl');
    writeFileSync(questions, '{"question":"one"}\n{"question":"two"}\n');
    const args = ['--graph', 'echo-rag', '--deadline', '2d', '--budget', '5.00', '--modes', 'live'];
    const result = await cli('batch', questions, ...args, '--out', join(dir, 'planned.out.jsonl'), '--poll-ms', '100');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/plan: live \(since .*\): cheapest mode that meets the deadline/);
    const { batchId } = JSON.parse(result.stdout) as { batchId: string };
    const status = await cli('batch', 'status', batchId);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/deadline: \d{4}-.*; budget: \$5; modes: live/);
    expect(status.stdout).toMatch(
      /estimate: \$\d+\.\d{6}, finished by \d{4}-.*; actual so far: \$\d+\.\d{6}, finished at /,
    );
    const refused = await cli('batch', questions, '--graph', 'echo-rag', '--budget', '0');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--budget must be a number of USD above 0/);
  });

  it('exits 2 on a file that is not JSON Lines', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, 'what is this\n');
    const result = await cli('batch', bad);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.jsonl:1 is not JSON/);
  });
});
