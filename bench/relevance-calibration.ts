/**
 * `npx tsx bench/relevance-calibration.ts [set] [questions]`: how well a search hit's
 * score tells a gold passage from the other hits of the same lexical top 20, pooled over all questions —
 * the AUC a single threshold gets across queries (1 = every gold hit outscores every other hit of any
 * question). Compares the `relevance` searches return (shared/retrieval/relevance-score.ts) with the raw
 * BM25 and with the score relative to each search's best hit that sources carried before. The set's
 * passages go into an in-memory embedded store (text, title as context); nothing else runs.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteVectorStore } from '../shared/adapters/sqlite/sqlite-vector-store.js';
import { searchDocuments } from '../shared/retrieval/search-documents.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const set = process.argv[2] ?? 'squad-v1.1-dev12';
const limit = Number(process.argv[3] ?? 400);
const dir = resolve(root, '../shared/eval', set);
const jsonLines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const corpus = jsonLines(`${dir}/corpus.jsonl`) as { id: string; title?: string; text: string }[];
const questions = (jsonLines(`${dir}/questions.jsonl`) as { question: string; gold_doc_ids: string[] }[]).slice(
  0,
  limit,
);

const store = new SqliteVectorStore({ path: ':memory:' });
for (let index = 0; index < corpus.length; index += 500)
  await store.upsert(
    'bench',
    'set',
    corpus.slice(index, index + 500).map(({ id, title = '', text }) => ({
      id,
      text,
      context: title,
      payload: { title },
    })),
  );

const scores: Record<'relevance' | 'bm25' | 'relativeToBest', { gold: number[]; other: number[] }> = {
  relevance: { gold: [], other: [] },
  bm25: { gold: [], other: [] },
  relativeToBest: { gold: [], other: [] },
};
for (const { question, gold_doc_ids: gold } of questions) {
  const hits = await searchDocuments(store, { query: question, collection: 'set', k: 20, tenant: 'bench' });
  const best = hits[0]?.score ?? 0;
  for (const hit of hits) {
    const side = gold.includes(hit.chunkId) ? 'gold' : 'other';
    scores.relevance[side].push(hit.relevance);
    scores.bm25[side].push(hit.score);
    scores.relativeToBest[side].push(best > 0 ? hit.score / best : 0);
  }
}
await store.close();

/** P(a gold hit outscores another hit), ties counting half: the area under the ROC curve. */
function auc({ gold, other }: { gold: number[]; other: number[] }): number {
  const sorted = [...other].sort((a, b) => a - b);
  let wins = 0;
  for (const score of gold) {
    let below = 0;
    let equal = 0;
    for (const value of sorted) {
      if (value < score) below += 1;
      else if (value === score) equal += 1;
      else break;
    }
    wins += below + equal / 2;
  }
  return wins / (gold.length * other.length);
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

process.stdout.write(
  `${set}: ${questions.length} questions, ${scores.relevance.gold.length} gold hits among ${scores.relevance.gold.length + scores.relevance.other.length}\n`,
);
for (const [name, sides] of Object.entries(scores))
  process.stdout.write(
    `${name}_auc=${auc(sides).toFixed(3)} ${name}_gold_p50=${median(sides.gold).toFixed(3)} ${name}_other_p50=${median(sides.other).toFixed(3)}\n`,
  );
