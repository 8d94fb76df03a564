/**
 * `npx tsx bench/dense-search.ts`: where a hybrid search's time goes on the embedded store, and the
 * dense side's designs side by side (question phase): `sqlite-vec` (sqlite-vec's brute-force
 * scan on the event loop, the first design; AGENTQ_VECTOR_CACHE_MB=0) and `memory` (DenseVectorCache:
 * the collection's vectors in one Float32Array, scored in JS; the default). A third design, sqlite-vec's
 * scan in a worker thread with its own read-only connection, was measured with this bench and dropped:
 * it kept the event loop free but cost more CPU per search than the scan it moved (CHANGELOG.md, "Hybrid at lexical speed").
 *
 * One SQLite file holds HotpotQA's 4,858 documents (their text, so BM25 works as in the eval) with
 * random 512-d unit vectors (a scan costs the same whatever the values), one collection. Three stores
 * open that file, one per design; rounds alternate the designs so that load on a shared machine falls
 * on all of them alike. Per design: milliseconds per search alone (dense only, lexical only, hybrid),
 * then 16 concurrent searches at a time: searches per second, CPU per search, and the event loop's
 * longest stalls while they run (a 1 ms ticker's gaps, p90 and max). Also checks that every design returns the same hits in the same order.
 * `--embed` adds the local model's query embedding: alone, and 16 at once. `--rounds N` (default 5),
 * `--docs N` (default all).
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteVectorStore } from '../shared/adapters/sqlite/sqlite-vector-store.js';
import { LocalEmbedder, LOCAL_DENSE_WEIGHT } from '../shared/adapters/local-embedder/local-embedder.js';
import type { VectorQuery } from '../shared/ports/vector-store.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const argument = (name: string) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
};
const rounds = Number(argument('--rounds') ?? 5);
const setDir = join(root, '../shared/eval/hotpotqa-dev-distractor');
const files = readdirSync(join(setDir, 'docs')).sort();
const documents = files.slice(0, Number(argument('--docs') ?? files.length));
const questions = readFileSync(join(setDir, 'questions.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((line) => (JSON.parse(line) as { question: string }).question)
  .slice(0, 64);
const DIMENSIONS = 512;
const TENANT = 'bench';
const COLLECTION = 'hotpot';

let seed = 42;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31) * 2 - 1;
const unitVector = () => {
  const vector = Array.from({ length: DIMENSIONS }, random);
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
};

const print = (name: string, value: number | string) =>
  process.stdout.write(`${name}=${typeof value === 'number' ? Number(value.toFixed(3)) : value}\n`);

const dir = mkdtempSync(join(tmpdir(), 'agentq-bench-dense-'));
const path = join(dir, 'vectors.sqlite');
const writer = new SqliteVectorStore({ path });
const loadStarted = performance.now();
for (let start = 0; start < documents.length; start += 500) {
  await writer.upsert(
    TENANT,
    COLLECTION,
    documents.slice(start, start + 500).map((file, index) => {
      const [title, ...body] = readFileSync(join(setDir, 'docs', file), 'utf8').split('\n');
      return {
        id: `d${start + index}`,
        text: body.join('\n').trim(),
        context: (title ?? '').replace(/^# /, ''),
        vector: unitVector(),
        payload: { docId: file },
      };
    }),
  );
}
print('records', documents.length);
print('load_s', (performance.now() - loadStarted) / 1000);

const designs = ['sqlite-vec', 'memory'] as const;
type Design = (typeof designs)[number];
const stores = new Map<Design, SqliteVectorStore>(
  designs.map((design) => [
    design,
    new SqliteVectorStore({ path, ...(design === 'sqlite-vec' ? { vectorCacheBytes: 0 } : {}) }),
  ]),
);
const queryVectors = questions.map(() => unitVector());
const fusion = { method: 'scores' as const, denseWeight: LOCAL_DENSE_WEIGHT };
const queryOf = (index: number, kind: 'dense' | 'lexical' | 'hybrid'): VectorQuery => ({
  collection: COLLECTION,
  limit: 10,
  ...(kind === 'dense' ? {} : { text: questions[index % questions.length]! }),
  ...(kind === 'lexical' ? {} : { vector: queryVectors[index % queryVectors.length]!, fusion }),
});

// Same hits, same order, every design (the scores may differ in the last float digits).
const reference = await Promise.all(
  questions.map((_question, index) => stores.get('sqlite-vec')!.query(TENANT, queryOf(index, 'hybrid'))),
);
let sameOrder = true;
let maxScoreDifference = 0;
for (const design of designs) {
  const hits = await Promise.all(
    questions.map((_question, index) => stores.get(design)!.query(TENANT, queryOf(index, 'hybrid'))),
  );
  const filtered = await Promise.all(
    questions.map((_question, index) =>
      stores.get(design)!.query(TENANT, {
        ...queryOf(index, 'hybrid'),
        filter: { docId: { in: documents.slice(index * 7, index * 7 + 40) } },
      }),
    ),
  );
  const filteredReference = await Promise.all(
    questions.map((_question, index) =>
      stores.get('sqlite-vec')!.query(TENANT, {
        ...queryOf(index, 'hybrid'),
        filter: { docId: { in: documents.slice(index * 7, index * 7 + 40) } },
      }),
    ),
  );
  hits.forEach((list, index) => {
    if (list.map((hit) => hit.id).join() !== reference[index]!.map((hit) => hit.id).join()) sameOrder = false;
    list.forEach(
      (hit, rank) =>
        (maxScoreDifference = Math.max(maxScoreDifference, Math.abs(hit.score - reference[index]![rank]!.score))),
    );
  });
  filtered.forEach((list, index) => {
    if (list.map((hit) => hit.id).join() !== filteredReference[index]!.map((hit) => hit.id).join()) sameOrder = false;
  });
}
print('same_hits_in_same_order', sameOrder ? 1 : 0);
print('max_fused_score_difference', maxScoreDifference.toExponential(2));

const sums = new Map<string, number[]>();
const add = (name: string, value: number) => sums.set(name, [...(sums.get(name) ?? []), value]);

for (let round = 0; round < rounds; round += 1) {
  const order = round % 2 === 0 ? designs : [...designs].reverse();
  for (const design of order) {
    const store = stores.get(design)!;
    for (const kind of ['dense', 'lexical', 'hybrid'] as const) {
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      for (let index = 0; index < questions.length; index += 1) await store.query(TENANT, queryOf(index, kind));
      const cpu = process.cpuUsage(cpuBefore);
      add(`${design}_${kind}_ms_per_search`, (performance.now() - started) / questions.length);
      // CPU of every thread of the process (the thread design's scan included).
      add(`${design}_${kind}_cpu_us_per_search`, (cpu.user + cpu.system) / questions.length);
    }
    // 16 searches in flight at a time, as a worker with 16 concurrent runs: how long the event loop is held.
    // The longest the event loop went without turning: a 1 ms ticker's largest gap (timers cannot fire while a search holds the loop).
    let lastTick = performance.now();
    let longestGap = 0;
    const gaps: number[] = [];
    const ticker = setInterval(() => {
      const now = performance.now();
      gaps.push(now - lastTick);
      longestGap = Math.max(longestGap, now - lastTick);
      lastTick = now;
    }, 1);
    await new Promise((resolveTick) => setTimeout(resolveTick, 5));
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    for (let start = 0; start < questions.length * 2; start += 16) {
      await Promise.all(
        Array.from({ length: 16 }, (_unused, offset) => store.query(TENANT, queryOf(start + offset, 'hybrid'))),
      );
      await new Promise((resolveTurn) => setImmediate(resolveTurn));
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    clearInterval(ticker);
    add(`${design}_concurrent16_searches_per_s`, (questions.length * 2) / seconds);
    add(`${design}_concurrent16_cpu_us_per_search`, (cpu.user + cpu.system) / (questions.length * 2));
    add(
      `${design}_concurrent16_loop_gap_p90_ms`,
      [...gaps].sort((left, right) => left - right)[Math.floor(gaps.length * 0.9)] ?? 0,
    );
    add(`${design}_concurrent16_loop_gap_max_ms`, longestGap);
  }
}
const median = (values: number[]) => [...values].sort((left, right) => left - right)[Math.floor(values.length / 2)]!;
for (const [name, values] of sums) print(name, median(values));
for (const kind of ['dense', 'hybrid'] as const) {
  for (const unit of ['ms', 'cpu_us'] as const) {
    const base = median(sums.get(`sqlite-vec_${kind}_${unit}_per_search`)!);
    print(`memory_vs_sqlite_vec_${kind}_${unit}_ratio`, median(sums.get(`memory_${kind}_${unit}_per_search`)!) / base);
  }
}

if (process.argv.includes('--embed')) {
  const embedder = new LocalEmbedder();
  await embedder.embed(['warm up']);
  const alone: number[] = [];
  for (const question of questions.slice(0, 16)) {
    const started = performance.now();
    await embedder.embed([question]);
    alone.push(performance.now() - started);
  }
  print('query_embed_alone_ms_p50', median(alone));
  const together: number[] = [];
  for (let start = 0; start < 64; start += 16) {
    await Promise.all(
      questions.slice(start, start + 16).map(async (question) => {
        const started = performance.now();
        await embedder.embed([question]);
        together.push(performance.now() - started);
      }),
    );
  }
  print('query_embed_16_at_once_wait_ms_p50', median(together));
  print('query_embed_16_at_once_wait_ms_max', Math.max(...together));
  await embedder.close();
}

await Promise.all([...stores.values(), writer].map((store) => store.close()));
rmSync(dir, { recursive: true, force: true });
