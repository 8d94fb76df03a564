/**
 * `npm run bench:ingest`: the `ingest` section of `npm run bench` alone (bench/sections/ingest.ts):
 * ingestion and search on the embedded store over the HotpotQA distractor set. Uses REDIS_URL, or a
 * private redis-server when it is unset. `--docs <dir>` and `--questions <file>` point elsewhere;
 * `--limit <n>` ingests only the first n documents; `--quick` 500 documents and 50 searches; `--embed local`
 * embeds chunks and queries with the built-in model (default `none`: lexical). Writes
 * bench/results/ingest-latest.json (ingest-local-latest.json with `--embed local`).
 */
import { runStandalone } from './lib/run-standalone.js';
import { ingestSection } from './sections/ingest.js';

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

await runStandalone(
  ingestSection({
    ...(docsDir ? { docsDir } : {}),
    ...(questionsFile ? { questionsFile } : {}),
    ...(limit === undefined ? {} : { limit }),
    embed,
  }),
  embed === 'local' ? 'ingest-local-latest.json' : 'ingest-latest.json',
  { docs: docsDir ?? 'hotpotqa-dev-distractor', limit: limit ?? null, embed },
);
