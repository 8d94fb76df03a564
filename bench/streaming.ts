/**
 * `npm run bench:streaming`: the `streaming` section of `npm run bench` alone (bench/sections/streaming.ts):
 * time to first token at an SSE client against the model server's, and durable Redis bytes per streamed
 * token. Uses REDIS_URL, or a private redis-server (AOF on, everysec) when it is unset. `-- --quick` gives
 * a short run. Writes bench/results/streaming-latest.json.
 */
import { runStandalone } from './lib/run-standalone.js';
import { streamingSection } from './sections/streaming.js';

await runStandalone(streamingSection, 'streaming-latest.json');
