/**
 * `npm run bench:priority`: the `priority` section alone (bench/sections/priority.ts): an interactive
 * run's p50 wall time on an idle system and while a 1,000-question batch runs. Uses REDIS_URL, or a
 * private redis-server when it is unset. `-- --quick` gives a short run (100 questions). Writes
 * bench/results/priority-latest.json.
 */
import { runStandalone } from './lib/run-standalone.js';
import { prioritySection } from './sections/priority.js';

await runStandalone(prioritySection, 'priority-latest.json');
