import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REDIS_ENV_NAMES } from '../../shared/config/redis-config.js';
import { SEARCH_ENV_NAMES } from '../../shared/config/search-config.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The configuration table, moved from README.md unchanged to a page of its own until the page generated
 * from the settings' declarations (docs/reference/configuration.md) replaces it.
 */
const page = 'docs/operations/configuration-table.md';

describe(`the configuration table (${page})`, () => {
  it('documents every environment variable the config modules read', () => {
    const source = readFileSync(`${root}/shared/config/config.ts`, 'utf8');
    const schema = source.slice(
      source.indexOf('const envSchema'),
      source.indexOf('\n});', source.indexOf('const envSchema')),
    );
    const names = [...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1]!);
    expect(names.length).toBeGreaterThan(20);
    // The Redis and search settings are read apart, without zod (shared/config/redis-config.ts, shared/config/search-config.ts).
    expect(REDIS_ENV_NAMES).toContain('REDIS_URL');
    expect(SEARCH_ENV_NAMES).toContain('QDRANT_URL');
    names.push(...REDIS_ENV_NAMES, ...SEARCH_ENV_NAMES);
    const table = readFileSync(`${root}/${page}`, 'utf8');
    const missing = names.filter((name) => !table.includes(`| \`${name}\``));
    expect(missing).toEqual([]);
  });
});
