import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../shared/config/config.js';
import { expectReaderMatchesZod, readOutcome } from '../helpers/env-reader-parity.js';
import { readSearchConfig, SEARCH_ENV_NAMES, type SearchConfig } from '../../shared/config/search-config.js';

/**
 * The zod schemas these variables had in shared/config/config.ts before they were read without zod (the CLI's cold
 * start): the reference for which values are accepted and what each gives (the refusals' words
 * are now the declarations' own, shared/config/settings/search.ts).
 */
const zodSchemas: Record<string, z.ZodType> = {
  AGENTQ_DATA_DIR: z.string().min(1).default('.agentq'),
  QDRANT_URL: z.string().url().optional(),
  QDRANT_API_KEY: z.string().min(1).optional(),
  AGENTQ_QDRANT_COLLECTION_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,48}$/, "must be 1-48 characters of letters, digits, '_' or '-'")
    .default('agentq'),
  AGENTQ_QDRANT_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
  AGENTQ_QDRANT_UPSERT_BATCH: z.coerce.number().int().min(1).default(256),
  AGENTQ_VECTOR_CACHE_MB: z.coerce.number().int().min(0).default(128),
  EMBED_MODEL: z.string().min(1).optional(),
  EMBED_PROVIDER: z
    .enum(['local', 'openai', 'none'], {
      error:
        'must be local (the built-in model, no endpoint), openai (EMBED_MODEL on OPENAI_BASE_URL) or none (lexical search only)',
    })
    .optional(),
};

const numbers = [
  '0',
  '1',
  '99',
  '100',
  '1e3',
  '0x10',
  '-1',
  '0.5',
  ' ',
  'abc',
  'Infinity',
  '1e400',
  '99999999999999999999',
];
const values: Record<string, string[]> = {
  AGENTQ_DATA_DIR: ['.agentq', '/var/lib/agentq', ' '],
  QDRANT_URL: ['http://127.0.0.1:6333', ' https://q.example.com ', 'qdrant:6333', 'not a url', 'http://[::1'],
  QDRANT_API_KEY: ['k', ' secret '],
  AGENTQ_QDRANT_COLLECTION_PREFIX: ['agentq', 'a_b-c', 'a b', 'x'.repeat(48), 'x'.repeat(49), 'é'],
  AGENTQ_QDRANT_TIMEOUT_MS: numbers,
  AGENTQ_QDRANT_UPSERT_BATCH: numbers,
  AGENTQ_VECTOR_CACHE_MB: numbers,
  EMBED_MODEL: ['text-embedding-3-small'],
  EMBED_PROVIDER: ['local', 'none', 'LOCAL', 'ollama', ' none'],
};

const configKeys: Record<string, keyof SearchConfig> = {
  AGENTQ_DATA_DIR: 'dataDir',
  QDRANT_URL: 'qdrantUrl',
  QDRANT_API_KEY: 'qdrantApiKey',
  AGENTQ_QDRANT_COLLECTION_PREFIX: 'qdrantCollectionPrefix',
  AGENTQ_QDRANT_TIMEOUT_MS: 'qdrantTimeoutMs',
  AGENTQ_QDRANT_UPSERT_BATCH: 'qdrantUpsertBatchSize',
  AGENTQ_VECTOR_CACHE_MB: 'vectorCacheMb',
  EMBED_MODEL: 'embedModel',
  EMBED_PROVIDER: 'embedProvider',
};

describe('the search settings, read without zod', () => {
  it('reads each of its variables as the zod schema did: the same value, or a refusal naming the value', () => {
    const refusals = expectReaderMatchesZod({
      values,
      zodSchemas,
      configKeys,
      light: readSearchConfig,
      full: loadConfig,
    });
    expect(refusals).toBeGreaterThan(15);
    expect(Object.keys(values).sort()).toEqual([...SEARCH_ENV_NAMES].sort());
  });

  it('refuses EMBED_PROVIDER and EMBED_MODEL that contradict each other, as the full configuration does', () => {
    for (const env of [
      { EMBED_PROVIDER: 'openai' },
      { EMBED_PROVIDER: 'local', EMBED_MODEL: 'text-embedding-3-small' },
    ]) {
      const light = readOutcome(() => readSearchConfig(env), configKeys['EMBED_PROVIDER']!);
      expect(light, JSON.stringify(env)).toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringContaining('EMBED_PROVIDER='),
      });
      expect(readOutcome(() => loadConfig(env), configKeys['EMBED_PROVIDER']!)).toEqual(light);
    }
    expect(readSearchConfig({ EMBED_MODEL: 'm' }).embedProvider).toBe('openai');
    expect(readSearchConfig({}).embedProvider).toBe('local');
  });

  it('has the full configuration’s defaults and tenant, and reads nothing else', () => {
    const full = loadConfig({ AGENTQ_TENANT: 'acme' });
    const light = readSearchConfig({
      AGENTQ_TENANT: 'acme',
      AGENTQ_PRICES: 'not a price table',
      REDIS_URL: 'not a url',
    });
    for (const key of Object.values(configKeys)) expect(light[key], key).toEqual(full[key]);
    expect(light.tenant).toBe('acme');
    expect(() => readSearchConfig({ AGENTQ_TENANT: 'a b' })).toThrow('AGENTQ_TENANT: must be 1-128 letters');
  });
});
