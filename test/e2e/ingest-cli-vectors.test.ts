import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { cliEnv, runCli } from '../helpers/run-cli.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/** `agentq ingest` with an embedder: done when searchable, with the vectors still pending said; `--wait-vectors` waits for them. */
describe('agentq ingest and the vectors added after it', () => {
  const data = tempDirectory();
  const files = tempDirectory('agentq-cli-vectors-');
  let server: ScriptedOpenAIServer;
  let env: TestEnv;
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const cli = (...args: string[]) =>
    runCli(
      args,
      cliEnv(env.config, {
        AGENTQ_DATA_DIR: data.path,
        AGENTQ_LOG_LEVEL: 'silent',
        EMBED_MODEL: 'scripted-embedding',
        OPENAI_BASE_URL: server.url,
      }),
    );

  beforeAll(async () => {
    // The endpoint holds every chunk until the gate opens.
    server = await startScriptedOpenAIServer({
      embeddingDimensions: 16,
      embeddingsScript: () => gate.then(() => undefined),
    });
    env = await startTestEnv({
      env: { AGENTQ_DATA_DIR: data.path, EMBED_MODEL: 'scripted-embedding', OPENAI_BASE_URL: server.url },
    });
    for (const folder of ['first', 'second']) {
      mkdirSync(join(files.path, folder));
      writeFileSync(join(files.path, folder, 'lynx.md'), `# Lynx\n\nThe ${folder} lynx hunts rabbits at dusk.\n`);
      writeFileSync(join(files.path, folder, 'heron.md'), `# Heron\n\nThe ${folder} heron stands in the shallows.\n`);
    }
  });
  afterAll(async () => {
    open();
    await env.close();
    await server.close();
    data.remove();
    files.remove();
  });

  it('reports the documents indexed while their vectors are pending, and --wait-vectors waits until none is', async () => {
    const first = await cli('ingest', join(files.path, 'first'), '--collection', 'first');
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ indexed: 2, chunks: 2, vectors: { added: 0, pending: 2 } });
    expect(first.stderr).toMatch(/searchable now; vectors pending for 2 of 2 chunks of first/);

    open();
    const second = await cli('ingest', join(files.path, 'second'), '--collection', 'second', '--wait-vectors');
    expect(second.code, second.stderr).toBe(0);
    const summary = JSON.parse(second.stdout);
    expect(summary).toMatchObject({ indexed: 2, vectors: { added: 2, pending: 0 } });
    expect(summary.vectorsSeconds).toBeGreaterThanOrEqual(0);
  }, 90_000);
});
