import type { Config } from '../../shared/config/config.js';
import { defaultsOf } from '../../shared/config/settings-area.js';
import { agentArea } from '../../shared/config/settings/agents.js';
import { modelArea } from '../../shared/config/settings/models.js';
import { providerBatchArea } from '../../shared/config/settings/provider-batches.js';

/** The settings agent nodes read, by their `Config` field names (docs/reference/configuration.md). */
const AGENT_SETTING_KEYS = [
  'maxToolRounds',
  'maxToolResultChars',
  'traceContent',
  'prices',
  'batchPrices',
  'flexPrices',
  'rateLimits',
  'contextWindow',
  'contextWindows',
  'summarizeAt',
  'ragTopK',
  'ragDenseWeight',
  'ragSources',
  'ragReranker',
  'guardrailTimeoutMs',
  'checkImageUrls',
] as const satisfies readonly (keyof Config)[];

type AgentSettingKey = (typeof AGENT_SETTING_KEYS)[number];

/**
 * Limits and switches of agent nodes: the settings of the same names (`maxToolRounds` is
 * AGENTQ_MAX_TOOL_ROUNDS, …; see docs/reference/configuration.md, "Agents and tools" and "Language
 * models"), declared once in shared/config/settings/agents.ts and models.ts, which give their types and
 * defaults. `maxTokens` is AGENTQ_LLM_MAX_TOKENS (`max_tokens` of each model request; unset: the
 * provider's limit).
 */
export type AgentSettings = Pick<Config, AgentSettingKey> & { maxTokens?: number };

/** A worker's agent settings from its configuration (`createDefaultServices`). */
export function agentSettingsFrom(config: Pick<Config, AgentSettingKey | 'llmMaxTokens'>): AgentSettings {
  const settings = Object.fromEntries(AGENT_SETTING_KEYS.map((key) => [key, config[key]])) as Pick<
    Config,
    AgentSettingKey
  >;
  return config.llmMaxTokens === undefined ? settings : { ...settings, maxTokens: config.llmMaxTokens };
}

/** The settings' defaults, from their declarations (what a worker has with nothing set). */
export const DEFAULT_AGENT_SETTINGS: Readonly<AgentSettings> = Object.freeze(
  agentSettingsFrom({ ...defaultsOf(modelArea), ...defaultsOf(providerBatchArea), ...defaultsOf(agentArea) }),
);
