/**
 * `npm run bench:recording`: the `recording` section of `npm run bench` alone (bench/sections/recording.ts):
 * Redis bytes of time travel's recording per react-agent run (1, 3, 8 tool rounds), with and without it,
 * and the model requests of a replay. Uses REDIS_URL, or a private redis-server when it is unset. Writes
 * bench/results/recording-latest.json.
 */
import { runStandalone } from './lib/run-standalone.js';
import { recordingSection } from './sections/recording.js';

await runStandalone(recordingSection, 'recording-latest.json');
