/**
 * Every environment variable agentq reads, declared once, by area (one file each in this folder). From
 * these declarations come the typed `Config` (shared/config/config.ts, inferred: no interface to keep in
 * step), the loader's validation and refusals, the CLI's light readers (redis-config.ts and
 * search-config.ts read only their area, without zod), `AgentSettings` and its defaults
 * (worker/agents/agent-settings.ts), and the reference page docs/reference/configuration.md
 * (`npm run docs:config`; test/unit/configuration-reference.test.ts fails while it is stale).
 *
 * To add a setting, add one entry to the `settings` of its area, keyed by its `Config` field name:
 *
 *     bodyLimitBytes: integer({
 *       env: 'AGENTQ_BODY_LIMIT_BYTES',   // the variable
 *       min: 1024,                        // bounds (max too, if any): the refusal says them
 *       default: 1024 * 1024,             // leave out for an optional setting (type `number | undefined`)
 *       doc: 'Larger request bodies get 413.',          // one line for the reference page
 *       when: 'Raise it for large run inputs.',         // optional: when to change it
 *     }),
 *
 * then run `npm run docs:config` and commit the page with it. `config.bodyLimitBytes` exists from then
 * on, typed. The kinds are in shared/config/setting-builders.ts: `integer`, `decimal`, `flag`, `choice`,
 * `text`, `matching`, `url`, and `parsed` for a grammar of its own (a table, JSON, a list). A rule between
 * settings, or a value computed from several, goes in the area's `configOf`. An area of its own is a new
 * file here, added to `SETTINGS_AREAS` below (in the order the page shows them).
 *
 * Do not read `process.env` anywhere else: a setting read elsewhere is missing from the page, unchecked at
 * start-up, and untyped.
 */
import { agentArea } from './agents.js';
import { apiArea } from './api.js';
import { autopilotArea } from './autopilot.js';
import { ingestArea } from './ingest.js';
import { modelArea } from './models.js';
import { providerBatchArea } from './provider-batches.js';
import { redisArea } from './redis.js';
import { searchArea } from './search.js';
import { webhookArea } from './webhooks.js';
import { workerArea } from './worker.js';

/** The areas in the reference page's order (also the order in which a refusal lists bad values). */
export const SETTINGS_AREAS = [
  redisArea,
  searchArea,
  workerArea,
  apiArea,
  webhookArea,
  modelArea,
  providerBatchArea,
  autopilotArea,
  agentArea,
  ingestArea,
] as const;
