/**
 * `npm run bench:answer-cache`: the `answer-cache` section alone (bench/sections/answer-cache.ts): the SEC
 * filings' questions asked as a batch with the answer cache, again, and after one filing changed. Uses
 * REDIS_URL, or a private redis-server when it is unset. `-- --quick` gives a short run (40 questions).
 * Writes bench/results/answer-cache-latest.json.
 */
import { runStandalone } from './lib/run-standalone.js';
import { answerCacheSection } from './sections/answer-cache.js';

await runStandalone(answerCacheSection, 'answer-cache-latest.json');
