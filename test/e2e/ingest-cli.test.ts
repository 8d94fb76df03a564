import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';

describe('agentq ingest and agentq search', () => {
  const data = tempDirectory();
  const files = tempDirectory('agentq-cli-files-');
  let env: TestEnv;
  const cli = (...args: string[]) =>
    runCli(args, cliEnv(env.config, { AGENTQ_DATA_DIR: data.path, AGENTQ_LOG_LEVEL: 'silent' }));

  beforeAll(async () => {
    env = await startTestEnv({ env: { AGENTQ_DATA_DIR: data.path } });
    mkdirSync(join(files.path, 'docs', 'nested'), { recursive: true });
    writeFileSync(join(files.path, 'docs', 'lynx.md'), '# Lynx\n\nThe Iberian lynx hunts rabbits at dusk.\n');
    writeFileSync(join(files.path, 'docs', 'nested', 'heron.txt'), 'Grey herons stand still in shallow water.\n');
    writeFileSync(join(files.path, 'docs', '.hidden.md'), 'skipped');
  });
  afterAll(async () => {
    await env.close();
    data.remove();
    files.remove();
  });

  it('ingest prints only a JSON summary on stdout (no progress bar off a terminal), and search finds the chunks', async () => {
    const ingest = await cli('ingest', join(files.path, 'docs'), '--collection', 'wildlife');
    expect(ingest.code).toBe(0);
    const summary = JSON.parse(ingest.stdout);
    expect(summary).toMatchObject({ collection: 'wildlife', total: 2, indexed: 2, unchanged: 0, failed: 0, chunks: 2 });
    expect(
      summary.documents
        .map((document: { path: string; status: string }) => [document.path.split('/').pop(), document.status])
        .sort(),
    ).toEqual([
      ['heron.txt', 'indexed'],
      ['lynx.md', 'indexed'],
    ]);
    expect(ingest.stderr).toMatch(/queued 2 of 2 documents/);
    expect(ingest.stderr).not.toContain('\r');

    const again = await cli('ingest', join(files.path, 'docs'), '--collection', 'wildlife');
    expect(JSON.parse(again.stdout)).toMatchObject({ total: 2, indexed: 0, unchanged: 2 });

    const search = await cli('search', 'lynx rabbits', '--collection', 'wildlife', '--json', '-k', '1');
    expect(search.code).toBe(0);
    const hits = JSON.parse(search.stdout);
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ title: 'Lynx', page: null, headingPath: ['Lynx'] });
    // relevance: the calibrated score in [0, 1], beside the rank score.
    expect(hits[0].relevance).toBeGreaterThan(0);
    expect(hits[0].relevance).toBeLessThanOrEqual(1);
    expect(Object.keys(hits[0]).sort()).toEqual([
      'chunkId',
      'collection',
      'docId',
      'headingPath',
      'page',
      'path',
      'relevance',
      'score',
      'text',
      'title',
    ]);

    const human = await cli('search', 'herons', '--collection', 'wildlife');
    expect(human.stdout).toMatch(/^1\. \[\d+\.\d+\] heron — .*heron\.txt\n {3}Grey herons/);
  });

  it('exits 1 when a document fails (the summary says which), 2 on a usage error', async () => {
    writeFileSync(join(files.path, 'empty.pdf'), '');
    const failed = await cli('ingest', join(files.path, 'empty.pdf'), '--collection', 'broken');
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      total: 1,
      failed: 1,
      documents: [{ status: 'failed', error: { code: 'UNSUPPORTED_FORMAT' } }],
    });

    const missing = await cli('ingest', join(files.path, 'nope.md'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/does not exist/);
    expect(missing.stdout).toBe('');
    const badK = await cli('search', 'x', '-k', '0');
    expect(badK.code).toBe(2);
  });

  it('stores absolute source paths: the same file given relative or absolute is one document, whatever the working directory', async () => {
    const file = join(files.path, 'docs', 'lynx.md');
    // runCli runs in the repository root; this relative path reaches the same file from there.
    const fromRoot = relative(fileURLToPath(new URL('../..', import.meta.url)), file);
    expect(fromRoot.startsWith('/')).toBe(false);
    const first = JSON.parse((await cli('ingest', file, '--collection', 'paths')).stdout);
    const second = JSON.parse((await cli('ingest', fromRoot, '--collection', 'paths')).stdout);
    expect(first.documents[0]).toMatchObject({ path: file, status: 'indexed' });
    expect(second.documents[0]).toMatchObject({ path: file, status: 'unchanged', docId: first.documents[0].docId });
    const hits = JSON.parse((await cli('search', 'lynx', '--collection', 'paths', '--json')).stdout);
    expect(hits[0].path).toBe(file);
  });
});
