import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startScriptedOpenAIServer } from '../fakes/scripted-openai-server.js';
import { tempDirectory } from '../helpers/ingest-fixtures.js';
import { loadScaledMs } from '../helpers/load-scale.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/**
 * `npm run eval` on a tiny generated set, as a child process: its own worker, real ingest, one batch, score.py last.
 * It runs as `npm run eval` does, bench/eval.ts through tsx (bench/ is not built into dist/).
 */
describe('eval script', () => {
  const set = tempDirectory('agentq-eval-set-');
  afterAll(() => set.remove());

  it(
    'ingests the docs, answers the questions as one batch of rag-agent runs, prints its figures then score.py’s metrics',
    async () => {
      mkdirSync(join(set.path, 'docs'));
      writeFileSync(
        join(set.path, 'docs', 'Okapi.md'),
        '# Okapi\n\nThe okapi is a forest giraffe that lives in the Congo basin. It eats leaves, buds and fungi.\n',
      );
      writeFileSync(
        join(set.path, 'docs', 'Lichen.md'),
        '# Lichen\n\nLichens grow slowly on granite. They tolerate drought and frost.\n',
      );
      writeFileSync(
        join(set.path, 'docs', 'Beekeeping.md'),
        '# Beekeeping\n\nBees need a dry hive. Leave enough honey for the colony to survive the cold winter.\n',
      );
      const questions = [
        {
          id: 'q-okapi',
          question: 'Where does the okapi forest giraffe live?',
          answers: ['Congo basin'],
          gold_doc_ids: ['Okapi'],
        },
        {
          id: 'q-lichen',
          question: 'On what rock do lichens grow slowly?',
          answers: ['granite'],
          gold_doc_ids: ['Lichen'],
        },
        {
          id: 'q-bees',
          question: 'What must be left for the colony to survive the winter?',
          answers: ['enough honey'],
          gold_doc_ids: ['Beekeeping'],
        },
      ];
      writeFileSync(
        join(set.path, 'questions.jsonl'),
        questions.map((question) => JSON.stringify(question)).join('\n') + '\n',
      );
      const out = join(set.path, 'preds.jsonl');

      const env: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: inject('redisUrl'), AGENTQ_LOG_LEVEL: 'silent' };
      delete env.LLM_MODEL;
      delete env.EMBED_MODEL;
      env.EMBED_PROVIDER = 'none';
      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', 'bench/eval.ts', '--set', set.path, '--concurrency', '2', '--out', out],
        { cwd: root, env, timeout: loadScaledMs(120_000) },
      );

      const lines = stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('runs=3');
      expect(lines[1]).toMatch(/^steps_per_run=\d+\.\d\d$/);
      expect(Number(lines[1]!.split('=')[1])).toBeGreaterThanOrEqual(3);
      expect(lines[2]).toMatch(/^wall_s=\d+\.\d$/);
      // The worker's CPU over the question phase (Linux /proc): every thread, and its event loop's, which is part of it.
      expect(lines[3]).toMatch(/^worker_cpu_s=\d+\.\d$/);
      expect(lines[4]).toMatch(/^worker_main_thread_cpu_s=\d+\.\d$/);
      // Each is rounded to 0.1 s from clock ticks read a moment apart: on a short run the part can print one step above the whole.
      expect(Number(lines[4]!.split('=')[1])).toBeLessThanOrEqual(Number(lines[3]!.split('=')[1]) + 0.1);
      // Last: score.py's output, exactly as it prints it for these predictions.
      const score = execFileSync(
        'python3',
        [join(root, '../shared/eval/score.py'), '--gold', join(set.path, 'questions.jsonl'), '--pred', out],
        { encoding: 'utf8' },
      );
      expect(lines[5]).toBe('retrieval=lexical');
      // Lexical: no embedder, so no answer was picked by the sentence comparison.
      expect(lines[6]).toBe('dense_compared=0');
      // Then what users feel: every answer cites its gold document and holds its gold answer.
      expect(lines.slice(7, 10)).toEqual([
        'cited_doc_precision=100.0',
        'answer_contains_gold=100.0',
        'answers_citing=100.0',
      ]);
      expect(lines.slice(10).join('\n')).toBe(score.trimEnd());
      expect(score).toMatch(/^questions: 3 {3}predicted: 3/);
      expect(score).toMatch(/recall@1\s+100\.00/);

      const predictions = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { id: string; answer: string; cited_doc_ids: string[] });
      expect(predictions.map((prediction) => [prediction.id, prediction.cited_doc_ids[0]])).toEqual(
        questions.map((question) => [question.id, question.gold_doc_ids[0]]),
      );
      expect(predictions[0]!.answer).toBe('The okapi is a forest giraffe that lives in the Congo basin.');
    },
    loadScaledMs(150_000),
  );

  it(
    'runs end to end in hybrid mode with embeddings from an OpenAI-compatible endpoint (the scripted server)',
    async () => {
      const server = await startScriptedOpenAIServer({ embeddingDimensions: 64 });
      try {
        const out = join(set.path, 'preds-hybrid.jsonl');
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          REDIS_URL: inject('redisUrl'),
          AGENTQ_LOG_LEVEL: 'silent',
          OPENAI_BASE_URL: server.url,
          OPENAI_API_KEY: 'test',
          EMBED_MODEL: 'scripted-embedding',
        };
        delete env.LLM_MODEL;
        const { stdout } = await run(
          process.execPath,
          ['--import', 'tsx', 'bench/eval.ts', '--set', set.path, '--concurrency', '2', '--out', out],
          { cwd: root, env, timeout: loadScaledMs(120_000) },
        );
        const lines = stdout.trimEnd().split('\n');
        expect(lines[0]).toBe('runs=3');
        expect(lines[5]).toBe('retrieval=hybrid');
        // Chunks were embedded at ingest and every question's query too, through the real openai SDK.
        const embedded = server.embeddingRequests().flatMap((request) => {
          const input = (request.body as { input: string | string[] }).input;
          return Array.isArray(input) ? input : [input];
        });
        expect(embedded.some((text) => text.includes('okapi is a forest giraffe'))).toBe(true);
        expect(embedded).toContain('Where does the okapi forest giraffe live?');
        const predictions = readFileSync(out, 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as { cited_doc_ids: string[] });
        expect(predictions.map((prediction) => prediction.cited_doc_ids[0])).toEqual(['Okapi', 'Lichen', 'Beekeeping']);
      } finally {
        await server.close();
      }
    },
    loadScaledMs(150_000),
  );

  it(
    'answers over a collection already ingested under --data-dir (--collection): no ingest, the same answers',
    async () => {
      const data = join(set.path, 'kept-data');
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        REDIS_URL: inject('redisUrl'),
        AGENTQ_LOG_LEVEL: 'silent',
        EMBED_PROVIDER: 'none',
      };
      delete env.LLM_MODEL;
      delete env.EMBED_MODEL;
      const first = await run(
        process.execPath,
        [
          '--import',
          'tsx',
          'bench/eval.ts',
          '--set',
          set.path,
          '--concurrency',
          '2',
          '--data-dir',
          data,
          '--out',
          join(set.path, 'first.jsonl'),
        ],
        { cwd: root, env, timeout: loadScaledMs(120_000) },
      );
      const collection = /into collection (\S+)/.exec(first.stderr)?.[1];
      expect(collection).toMatch(/^eval-/);
      const second = await run(
        process.execPath,
        [
          '--import',
          'tsx',
          'bench/eval.ts',
          '--set',
          set.path,
          '--concurrency',
          '2',
          '--data-dir',
          data,
          '--collection',
          collection!,
          '--out',
          join(set.path, 'second.jsonl'),
        ],
        { cwd: root, env, timeout: loadScaledMs(120_000) },
      );
      expect(second.stderr).toContain(`no ingest: the questions go to collection ${collection}`);
      expect(second.stderr).not.toMatch(/ingested \d+/);
      expect(second.stdout.split('\n')[0]).toBe('runs=3');
      expect(readFileSync(join(set.path, 'second.jsonl'), 'utf8')).toBe(
        readFileSync(join(set.path, 'first.jsonl'), 'utf8'),
      );
      // --collection without --data-dir is refused: it names a collection of a kept folder.
      await expect(
        run(process.execPath, ['--import', 'tsx', 'bench/eval.ts', '--set', set.path, '--collection', collection!], {
          cwd: root,
          env,
          timeout: loadScaledMs(60_000),
        }),
      ).rejects.toMatchObject({
        stderr: expect.stringContaining('--collection names a collection already ingested under --data-dir'),
      });
    },
    loadScaledMs(200_000),
  );
});
