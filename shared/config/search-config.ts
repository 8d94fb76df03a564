import { invalidConfiguration, presentEnv, readSettings } from './settings-area.js';
import { redisArea } from './settings/redis.js';
import { searchArea, type SearchConfig } from './settings/search.js';

/**
 * Only the search settings (shared/config/settings/search.ts) and the default tenant, for `agentq search`
 * on a collection whose queries need no embedding: read without zod and without the other areas (the CLI's
 * cold start). Other variables are not read, so a bad one (say AGENTQ_PRICES) does not stop it;
 * the worker and the API still refuse it, with the same message for a bad search setting.
 */
export function readSearchConfig(env: NodeJS.ProcessEnv = process.env): SearchConfig & { tenant: string } {
  const present = presentEnv(env);
  const tenant = readSettings({ tenant: redisArea.settings.tenant }, present);
  const search = readSettings(searchArea.settings, present);
  const problems = [...tenant.problems, ...search.problems];
  if (problems.length > 0) throw invalidConfiguration(problems);
  return { tenant: tenant.values.tenant, ...searchArea.configOf(search.values) };
}

/** The environment variables this part reads (AGENTQ_TENANT besides). */
export const SEARCH_ENV_NAMES = Object.values(searchArea.settings).map((setting) => setting.env);

export type { EmbedProvider, SearchConfig } from './settings/search.js';
