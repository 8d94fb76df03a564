/**
 * `npm run bench:steps`: the `steps` section of `npm run bench` alone (bench/sections/steps.ts): what a
 * step costs, beside a plain BullMQ job chain and an in-process loop, and on the model-calling graph.
 * Uses REDIS_URL, or a private redis-server (AOF on, everysec) when it is unset. `-- --quick` gives a
 * short run. Writes bench/results/steps-latest.json.
 */
import { runStandalone } from './lib/run-standalone.js';
import { stepsSection } from './sections/steps.js';

await runStandalone(stepsSection, 'steps-latest.json');
