/**
 * `npm run bench:grey`: the `grey-failure` section alone (bench/sections/grey-failure.ts): runs stuck
 * while a worker's data connections are silent and its liveness connection is not, and how long its peer
 * takes to finish them. Uses REDIS_URL, or a private redis-server when it is unset. `-- --quick` gives a
 * short run. Writes bench/results/grey-failure-latest.json.
 */
import { runStandalone } from './lib/run-standalone.js';
import { greyFailureSection } from './sections/grey-failure.js';

await runStandalone(greyFailureSection, 'grey-failure-latest.json');
