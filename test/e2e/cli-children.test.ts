import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildRunLink, RunStatus } from '../../shared/contracts/run-record.js';
import { childDoubleGraph, parentSumGraph } from '../helpers/child-run-graphs.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** `agentq children` pages a parent's children as the route does; `agentq status` of a child names its parent. */
describe('the agentq CLI: child runs', () => {
  let env: TestEnv;
  const cli = (...args: string[]) => runCli(args, cliEnv(env.config));

  beforeAll(async () => {
    env = await startTestEnv({ graphs: [childDoubleGraph(), parentSumGraph()] });
  });
  afterAll(async () => env?.close());

  it('children lists every child with its graph and status, page by page; status shows parent: <id>', async () => {
    const parent = await env.client.enqueue({ graph: 'parent-sum', input: { ns: [1, 2, 3, 4, 5] } });
    expect((await env.client.wait(parent.id)).output).toMatchObject({ sum: 30 });

    const seen: (ChildRunLink & { status: RunStatus })[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await cli('children', parent.id, '--limit', '2', '--json', ...(cursor ? ['--cursor', cursor] : []));
      expect(page.code).toBe(0);
      const body = JSON.parse(page.stdout) as {
        children: (ChildRunLink & { status: RunStatus })[];
        nextCursor: string | null;
        total: number;
      };
      expect(body.total).toBe(5);
      seen.push(...body.children);
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(cursor).toBeNull();
    expect(new Set(seen.map((child) => child.runId)).size).toBe(5);
    for (const child of seen) expect(child).toMatchObject({ graph: 'child-double', status: 'completed', wait: true });

    const text = await cli('children', parent.id);
    expect(text.code).toBe(0);
    const lines = text.stdout.trim().split('\n');
    expect(lines).toHaveLength(5);
    for (const line of lines) expect(line).toMatch(/^\S+\tchild-double\tcompleted\tstep=s0\.t0\twaited$/);
    expect(new Set(lines.map((line) => line.split('\t')[0]))).toEqual(new Set(seen.map((child) => child.runId)));
    expect(text.stderr).toContain('5 of 5 children');

    const child = await cli('status', seen[0]!.runId);
    expect(child.code).toBe(0);
    expect(child.stdout).toContain(`parent: ${parent.id} (step s0.t0)`);
    const own = await cli('status', parent.id);
    expect(own.stdout).not.toContain('parent:');
  });

  it('children of a run that does not exist exits 1 with NOT_FOUND', async () => {
    const missing = await cli('children', 'run_no_such_parent');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('NOT_FOUND');
  });
});
