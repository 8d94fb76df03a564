import { SETTINGS_AREAS } from './settings/all-settings.js';
import { invalidConfiguration, presentEnv, readSettings, type AreaConfig } from './settings-area.js';
import type { AgentConfig } from './settings/agents.js';
import type { ApiConfig } from './settings/api.js';
import type { AutopilotConfig } from './settings/autopilot.js';
import type { IngestConfig } from './settings/ingest.js';
import type { ModelConfig } from './settings/models.js';
import type { ProviderBatchConfig } from './settings/provider-batches.js';
import type { RedisConfig } from './settings/redis.js';
import type { SearchConfig } from './settings/search.js';
import type { WebhookConfig } from './settings/webhooks.js';
import type { WorkerConfig } from './settings/worker.js';

/**
 * The whole configuration, inferred from the declarations (shared/config/settings/all-settings.ts says
 * how to add a setting): one field per setting, plus what the areas compute (`production`,
 * `embedProvider`, …). Each field's variable, default and meaning are on docs/reference/configuration.md.
 */
export type Config = RedisConfig &
  SearchConfig &
  WorkerConfig &
  ApiConfig &
  WebhookConfig &
  ModelConfig &
  ProviderBatchConfig &
  AutopilotConfig &
  AgentConfig &
  IngestConfig;

// Every area is in Config (and nothing else is): adding an area without adding it above fails here.
type AllAreas = AreaConfig<(typeof SETTINGS_AREAS)[number]>;
const _everyAreaInConfig: [Config] extends [UnionToIntersection<AllAreas>] ? true : never = true;
type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void
  ? I
  : never;

/**
 * Reads and validates every setting of `env` (empty values are unset). Every bad value is named at once
 * (`NAME: must be …, got "…"`); then each area's rules between its settings are checked. The only reader
 * of the whole environment; the CLI's light readers (redis-config.ts, search-config.ts) read one area each.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = presentEnv(env);
  const reads = SETTINGS_AREAS.map((area) => readSettings(area.settings, present));
  const problems = reads.flatMap((read) => read.problems);
  if (problems.length > 0) throw invalidConfiguration(problems);
  const parts = SETTINGS_AREAS.map((area, index) =>
    (area.configOf as (values: unknown) => object)(reads[index]!.values),
  );
  return Object.assign({}, ...parts) as Config;
}

export { DEFAULT_REDIS_URL, readRedisConfig, type RedisConfig } from './redis-config.js';
export { readSearchConfig, type EmbedProvider, type SearchConfig } from './search-config.js';
