import { AgentqError } from '../contracts/errors.js';
import type { Setting } from './setting-builders.js';

/** The settings of one area, by their `Config` field name. */
type SettingTable = Record<string, Setting<unknown>>;

/** The values a table of settings reads, by field name: what the declarations infer. */
type SettingValues<S extends SettingTable> = { [Key in keyof S]: ReturnType<S[Key]['fallback']> };

/**
 * One area of the configuration (Redis, the API, …): its settings, and how their values become its part
 * of `Config` (cross-checks between settings, values computed from several). One file each under
 * shared/config/settings/, one section each on the reference page.
 */
export interface SettingsArea<S extends SettingTable = SettingTable, C = unknown> {
  /** The reference page's heading. */
  readonly title: string;
  /** The reference page's paragraph under the heading. */
  readonly intro: string;
  readonly settings: S;
  /** The area's part of `Config` from valid values; throws an AgentqError (INVALID_INPUT) for a contradiction. */
  readonly configOf: (values: SettingValues<S>) => C;
}

/** The part of `Config` an area gives. */
export type AreaConfig<A> = A extends { configOf: (values: never) => infer C } ? C : never;

/** An area; without `configOf` its part of `Config` is its settings' values as read. */
export function defineArea<S extends SettingTable, C = SettingValues<S>>(area: {
  title: string;
  intro: string;
  settings: S;
  configOf?: (values: SettingValues<S>) => C;
}): SettingsArea<S, C> {
  return { ...area, configOf: area.configOf ?? ((values) => values as C) };
}

/** Where the refusals send the reader. */
export const CONFIGURATION_REFERENCE = 'docs/reference/configuration.md';

/** `env` without its empty values: an empty variable means unset, everywhere in the configuration. */
export function presentEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const present: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && value !== '') present[name] = value;
  return present;
}

/** Reads each setting of `settings` from `env` (empty values already dropped): the values, or `NAME: problem` for each problem. */
export function readSettings<S extends SettingTable>(
  settings: S,
  env: Record<string, string>,
): { values: SettingValues<S>; problems: string[] } {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, setting] of Object.entries(settings)) {
    const text = env[setting.env];
    if (text === undefined) {
      values[key] = setting.fallback();
      continue;
    }
    const read = setting.read(text);
    if (read.problems) problems.push(...read.problems.map((problem) => `${setting.env}: ${problem}`));
    else values[key] = read.value;
  }
  return { values: values as SettingValues<S>, problems };
}

/** The refusal of a configuration with these problems (`NAME: problem` each). */
export function invalidConfiguration(problems: string[]): AgentqError {
  return new AgentqError(
    'INVALID_INPUT',
    `invalid configuration: ${problems.join('; ')} (see ${CONFIGURATION_REFERENCE})`,
  );
}

/** An area's part of `Config` from `env` (empty values already dropped); every bad value is named at once. */
export function readArea<S extends SettingTable, C>(area: SettingsArea<S, C>, env: Record<string, string>): C {
  const { values, problems } = readSettings(area.settings, env);
  if (problems.length > 0) throw invalidConfiguration(problems);
  return area.configOf(values);
}

/** An area's values when nothing is set: its defaults, from the declarations. */
export function defaultsOf<S extends SettingTable, C>(area: SettingsArea<S, C>): C {
  return readArea(area, {});
}
