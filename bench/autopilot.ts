/**
 * `npm run bench:autopilot`: the `autopilot` section alone (bench/sections/autopilot.ts): 500 SEC questions
 * answered four ways (all live, all provider batch, all flex, autopilot with a deadline) against one scripted
 * provider that plays every mode. Uses REDIS_URL, or a private redis-server when it is unset. `-- --quick` gives
 * a short run (100 questions). Writes bench/results/autopilot-latest.json.
 */
import { runStandalone } from './lib/run-standalone.js';
import { autopilotSection } from './sections/autopilot.js';

await runStandalone(autopilotSection, 'autopilot-latest.json');
