import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApi, type ApiInstance } from '../../producer/api/create-api.js';
import { createLogger } from '../../shared/telemetry/logger.js';
import { docSnippet, repoRoot } from '../helpers/doc-pages.js';
import { cliEnv } from '../helpers/run-cli.js';
import { embeddedStoreOf } from '../helpers/rag-fixtures.js';
import { startTestEnv, type TestEnv } from '../helpers/test-env.js';

/**
 * The five-minute tour, run as a reader runs it: each shell block of README.md and of the getting-started
 * pages, as written, in bash, with `npx agentq` (the built CLI: npm test builds first) against a worker
 * and an API like `npm start`'s. What differs is only where things are: Redis, the key prefixes and the
 * data folder come from the environment, and the API's `localhost:3000` is the port this test listens on.
 * The worker and the CLI are lexical (EMBED_PROVIDER=none), as every test but the local model's own.
 */
const readme = 'README.md';
const install = 'docs/getting-started/install.md';
const firstBatch = 'docs/getting-started/first-batch.md';

function bash(script: string, cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The JSON values printed one after another (pretty-printed or one per line), in order. */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let rest = text.trim();
  while (rest.length > 0) {
    let end = rest.length;
    for (; end > 0; end -= 1) {
      try {
        values.push(JSON.parse(rest.slice(0, end)));
        break;
      } catch {
        // not a whole value yet: try a shorter prefix
      }
    }
    if (end === 0) throw new Error(`not JSON: ${rest.slice(0, 200)}`);
    rest = rest.slice(end).trim();
  }
  return values;
}

interface ChatAnswer {
  answer: string;
  sources: { path: string }[];
}

describe('the five-minute tour', { timeout: 240_000 }, () => {
  let env: TestEnv;
  let api: ApiInstance;
  let shellEnv: Record<string, string>;
  let apiAddress: string;
  const scratch = mkdtempSync(join(repoRoot, '.readme-snippets-'));

  beforeAll(async () => {
    expect(
      existsSync(join(repoRoot, 'dist/bin/agentq.js')),
      'dist/bin/agentq.js is missing: run `npm run build` (npm test does it)',
    ).toBe(true);
    // `./docs` of the tour is the reader's checkout: a copy, so the test's own files stay out of it.
    cpSync(join(repoRoot, 'docs'), join(scratch, 'docs'), { recursive: true });
    // As `npm start`: ingest and rag-agent's searches use the one embedded store of the data folder.
    const dataDir = join(scratch, '.agentq');
    env = await startTestEnv({
      env: { AGENTQ_DATA_DIR: dataDir },
      services: { vectorStore: embeddedStoreOf(dataDir) },
    });
    api = await createApi({ config: env.config, logger: createLogger('silent') });
    const url = new URL(await api.listen({ port: 0, host: '127.0.0.1' }));
    apiAddress = url.host;
    shellEnv = cliEnv(env.config, { AGENTQ_LOG_LEVEL: 'warn', EMBED_PROVIDER: 'none' });
  });
  afterAll(async () => {
    await api?.close();
    await env?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Runs a page's shell block (found by its first line) and returns what it printed. */
  async function runBlock(page: string, firstLine: string): Promise<string> {
    const block = docSnippet(page, 'sh', firstLine).replaceAll('localhost:3000', apiAddress);
    const result = await bash(block, scratch, shellEnv);
    expect(result.code, `${page}: ${firstLine}\n${result.stderr}`).toBe(0);
    return result.stdout;
  }

  function expectChainRun(stdout: string): void {
    const record = JSON.parse(stdout) as { status: string; output: unknown };
    expect(record.status).toBe('completed');
    expect(record.output).toEqual({ visited: [0, 1, 2] });
  }

  function expectCitedAnswer(chat: ChatAnswer): void {
    expect(chat.answer.length, JSON.stringify(chat)).toBeGreaterThan(0);
    expect(chat.sources.length, JSON.stringify(chat)).toBeGreaterThan(0);
    expect(chat.sources.length).toBeGreaterThan(0);
    // The question is how to enqueue from Python: the guide that shows it is among the sources.
    expect(chat.sources.map((source) => source.path).join(' '), JSON.stringify(chat)).toContain(
      'enqueue-from-another-service.md',
    );
  }

  async function expectBatchAnswers(): Promise<void> {
    const answers = readFileSync(join(scratch, 'answers.jsonl'), 'utf8').trim().split('\n');
    expect(answers.map((line) => (JSON.parse(line) as { id: string }).id).sort()).toEqual(['q1', 'q2']);
    for (const line of answers) expect(JSON.parse(line)).toMatchObject({ status: 'completed' });
    rmSync(join(scratch, 'answers.jsonl'));
  }

  it(`${readme}: enqueue a run and watch it`, async () => {
    expectChainRun(await runBlock(readme, 'npx agentq run chain'));
  });

  it(`${readme}: ingest documents and ask`, async () => {
    const [summary, chat] = jsonValues(await runBlock(readme, 'npx agentq ingest ./docs/guides')) as [
      { failed: number; total: number },
      ChatAnswer,
    ];
    expect(summary.failed).toBe(0);
    expect(summary.total).toBeGreaterThan(10);
    expectCitedAnswer(chat);
  });

  it(`${readme}: a batch of questions`, async () => {
    await runBlock(readme, "printf '%s\\n'");
    await expectBatchAnswers();
  });

  it(`${install}: the first run`, async () => {
    expectChainRun(await runBlock(install, 'npx agentq run chain'));
  });

  it(`${firstBatch}: index, ask one question, then a batch`, async () => {
    const [summary] = jsonValues(await runBlock(firstBatch, 'npx agentq ingest ./docs/guides')) as [{ failed: number }];
    expect(summary.failed).toBe(0);
    expectCitedAnswer(JSON.parse(await runBlock(firstBatch, 'curl -s localhost:3000/v1/agent/chat')) as ChatAnswer);
    await runBlock(firstBatch, "printf '%s\\n'");
    await expectBatchAnswers();
  });
});
