/**
 * `npm run bench:storage`: the `storage` section alone (bench/sections/storage.ts): the bytes a 5,000-step
 * run, a fork of it and a 5-turn conversation keep in Redis against what the tenant's storage budget counts.
 * Uses REDIS_URL, or a private redis-server when it is unset. Writes bench/results/storage-latest.json.
 */
import { runStandalone } from './lib/run-standalone.js';
import { storageSection } from './sections/storage.js';

await runStandalone(storageSection, 'storage-latest.json');
