/**
 * `npm run bench:ingest`: the `ingest-sec` and `ingest` sections of `npm run bench` in one run: first
 * the 20 SEC filings ingested lexically and with the default settings side by side (time until
 * searchable, ingest_chunks_per_s, vectors_per_s: bench/sections/ingest-sec.ts), then ingestion and
 * search on the embedded store over the HotpotQA distractor set (bench/sections/ingest.ts). Uses
 * REDIS_URL, or a private redis-server when it is unset. `--no-sec` skips the SEC filings, `--vectors-timeout
 * <s>` stops waiting for vectors after s seconds (a machine too busy for low-priority threads); `--docs <dir>`
 * and `--questions <file>` point the second part elsewhere; `--limit <n>` ingests only the first n
 * documents; `--quick` 500 documents and 50 searches; `--embed local` embeds chunks and queries with the
 * built-in model (default `none`: lexical). Writes bench/results/ingest-latest.json
 * (ingest-local-latest.json with `--embed local`).
 */
import { runStandalone } from './lib/run-standalone.js';
import { ingestSection } from './sections/ingest.js';
import { ingestSecSection } from './sections/ingest-sec.js';

const argument = (name: string) => {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
};
const limit = argument('--limit') === undefined ? undefined : Number(argument('--limit'));
if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
  throw new Error(`--limit must be a positive integer, got '${argument('--limit')}'`);
const docsDir = argument('--docs');
const questionsFile = argument('--questions');
const embed = argument('--embed') ?? 'none';
if (embed !== 'none' && embed !== 'local') throw new Error(`--embed must be none or local, got '${embed}'`);

const vectorsTimeout = argument('--vectors-timeout');
if (vectorsTimeout !== undefined && !(Number(vectorsTimeout) > 0))
  throw new Error(`--vectors-timeout must be a number of seconds, got '${vectorsTimeout}'`);
const hotpot = ingestSection({
  ...(docsDir ? { docsDir } : {}),
  ...(questionsFile ? { questionsFile } : {}),
  ...(limit === undefined ? {} : { limit }),
  ...(vectorsTimeout === undefined ? {} : { vectorsTimeoutMs: Number(vectorsTimeout) * 1000 }),
  embed,
});
const sec = process.argv.includes('--no-sec')
  ? undefined
  : ingestSecSection(vectorsTimeout === undefined ? {} : { vectorsTimeoutMs: Number(vectorsTimeout) * 1000 });
await runStandalone(
  {
    name: sec ? 'ingest-sec + ingest' : 'ingest',
    run: async (context) => ({ ...(sec ? await sec.run(context) : {}), ...(await hotpot.run(context)) }),
  },
  embed === 'local' ? 'ingest-local-latest.json' : 'ingest-latest.json',
  { docs: docsDir ?? 'hotpotqa-dev-distractor', limit: limit ?? null, embed },
);
