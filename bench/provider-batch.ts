/**
 * `npm run bench:provider-batch`: the `provider-batch` section alone (bench/sections/provider-batch.ts):
 * a 500-question batch over the SEC filings answered live, then through the provider's Batch API.
 * Uses REDIS_URL, or a private redis-server when it is unset. `-- --quick` gives a short run
 * (100 questions). Writes bench/results/provider-batch-latest.json.
 */
import { runStandalone } from './lib/run-standalone.js';
import { providerBatchSection } from './sections/provider-batch.js';

await runStandalone(providerBatchSection, 'provider-batch-latest.json');
