import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../shared/config/config.js';
import { SETTINGS_AREAS } from '../../shared/config/settings/all-settings.js';
import {
  CONFIGURATION_REFERENCE_PATH,
  renderConfigurationReference,
} from '../../scripts/render-configuration-reference.js';
import { docSnippet } from '../helpers/doc-pages.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const settings = SETTINGS_AREAS.flatMap((area) => Object.entries(area.settings));

/** Source files of the product (not tests, benches or scripts), recursively. */
function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('the configuration reference page (docs/reference/configuration.md)', () => {
  it('is what the setting declarations generate', () => {
    const committed = readFileSync(join(root, CONFIGURATION_REFERENCE_PATH), 'utf8');
    expect(
      committed === renderConfigurationReference(),
      `${CONFIGURATION_REFERENCE_PATH} is stale: the declarations in shared/config/settings/ changed; run npm run docs:config and commit the page`,
    ).toBe(true);
  });

  it('quotes a refusal as loadConfig words it (docs/reference/configuration.md)', () => {
    const example = docSnippet('docs/reference/configuration.md', 'text', 'invalid configuration:').trim();
    expect(() => loadConfig({ AGENTQ_WORKER_CONCURRENCY: '0', AGENTQ_LLM_STREAM: 'on' })).toThrow(example);
  });

  it('shows every setting once, with its default and what is allowed', () => {
    const page = renderConfigurationReference();
    expect(settings.length).toBeGreaterThan(90);
    for (const [, setting] of settings) {
      const rows = page.split('\n').filter((line) => line.startsWith(`| \`${setting.env}\` |`));
      expect(rows, setting.env).toHaveLength(1);
      expect(rows[0], setting.env).toContain(setting.shownDefault);
      expect(setting.doc.length, `${setting.env} has a one-line doc`).toBeGreaterThan(10);
    }
  });
});

describe('each setting declared once', () => {
  it('names each variable and each Config field in one declaration only', () => {
    const envs = settings.map(([, setting]) => setting.env);
    const keys = settings.map(([key]) => key);
    expect(envs.filter((env, index) => envs.indexOf(env) !== index)).toEqual([]);
    expect(keys.filter((key, index) => keys.indexOf(key) !== index)).toEqual([]);
  });

  it('gives each setting its default when nothing is set', () => {
    const config = loadConfig({}) as unknown as Record<string, unknown>;
    for (const [key, setting] of settings) {
      // The areas compute a few fields from several settings (production, embedProvider, …).
      if (!(key in config)) continue;
      if (['chunkOverlapTokens', 'embedProvider', 'traceUrl', 'redisClusterNodes'].includes(key)) continue;
      expect(config[key], setting.env).toEqual(setting.fallback());
    }
  });

  it('reads process.env nowhere but the configuration modules', () => {
    const offenders = ['shared', 'worker', 'producer', 'bin']
      .flatMap(sourceFiles)
      .filter((file) => !file.includes(`${join(root, 'shared/config')}`))
      .filter((file) => /process\.env(\.[A-Z_]|\[['"`])/.test(readFileSync(file, 'utf8')))
      .map((file) => file.slice(root.length));
    expect(offenders, 'declare the variable in shared/config/settings/ and read it from the Config').toEqual([]);
  });
});
