import { AgentqError } from '../contracts/errors.js';
import {
  integer,
  invalidConfiguration,
  oneOf,
  optional,
  pattern,
  presentEnv,
  readEnv,
  text,
  url,
  withDefault,
  type EnvValues,
  type Reader,
} from './env-readers.js';
import { TENANT_READER } from './redis-config.js';

export type EmbedProvider = 'local' | 'openai' | 'none';

/**
 * The part of the configuration (shared/config/config.ts) that says where the ingested documents are and who
 * embeds queries: what `agentq search` needs to open the vector store. Read without zod, as the Redis
 * settings are (shared/config/redis-config.ts, issue 19: CLI cold start); `loadConfig` reads these variables
 * through this module too, so both refuse a bad value with the same message and code.
 */
export interface SearchConfig {
  /** Local data (the private redis-server's AOF, the embedded store). @default '.agentq' */
  dataDir: string;
  /** Qdrant server for document search; unset: the embedded SQLite store under `dataDir`. */
  qdrantUrl: string | undefined;
  /** Sent as Qdrant's `api-key` header. @default none */
  qdrantApiKey: string | undefined;
  /** agentq's Qdrant collections are `<prefix>_chunks` and `<prefix>_collections`. @default 'agentq' */
  qdrantCollectionPrefix: string;
  /** Per Qdrant request. @default 30000 */
  qdrantTimeoutMs: number;
  /** Points per Qdrant upsert request. @default 256 */
  qdrantUpsertBatchSize: number;
  /**
   * MiB of vectors each process keeps in memory for the embedded store's dense search
   * (AGENTQ_VECTOR_CACHE_MB; a collection larger than this is scanned by sqlite-vec; 0: always). @default 128
   */
  vectorCacheMb: number;
  /**
   * Who embeds chunks and queries (EMBED_PROVIDER): `local` (the built-in model, in threads of each
   * process), `openai` (EMBED_MODEL on OPENAI_BASE_URL) or `none` (lexical search only; multi-agent
   * recalls experts lexically). @default `openai` when EMBED_MODEL is set, else `local`
   */
  embedProvider: EmbedProvider;
  /** Embedding model on the OPENAI_BASE_URL endpoint (EMBED_PROVIDER=openai). */
  embedModel: string | undefined;
}

/** Each variable with its reader; the messages are zod's for the schema each had (test/unit/search-config.test.ts). */
const readers = {
  AGENTQ_DATA_DIR: withDefault('.agentq', text),
  QDRANT_URL: optional(url),
  QDRANT_API_KEY: optional(text),
  AGENTQ_QDRANT_COLLECTION_PREFIX: withDefault(
    'agentq',
    pattern(/^[A-Za-z0-9_-]{1,48}$/, "must be 1-48 characters of letters, digits, '_' or '-'"),
  ),
  AGENTQ_QDRANT_TIMEOUT_MS: withDefault(30_000, integer({ min: 100 })),
  AGENTQ_QDRANT_UPSERT_BATCH: withDefault(256, integer({ min: 1 })),
  AGENTQ_VECTOR_CACHE_MB: withDefault(128, integer({ min: 0 })),
  EMBED_MODEL: optional(text),
  EMBED_PROVIDER: optional(
    oneOf(
      ['local', 'openai', 'none'] as const,
      'must be local (the built-in model, no endpoint), openai (EMBED_MODEL on OPENAI_BASE_URL) or none (lexical search only)',
    ),
  ),
} satisfies Record<string, Reader<unknown>>;

/** The environment variables this module reads (the README's configuration table lists each). */
export const SEARCH_ENV_NAMES = Object.keys(readers) as (keyof typeof readers)[];

type SearchEnv = EnvValues<typeof readers>;

/** Reads this module's variables of `env` (empty values already dropped): their values, or `NAME: message` for each problem. */
export function parseSearchEnv(env: Record<string, string>): { values: SearchEnv; problems: string[] } {
  return readEnv(readers, env);
}

/** The settings from valid values; refuses EMBED_PROVIDER and EMBED_MODEL that contradict each other. */
export function searchConfigOf(values: SearchEnv): SearchConfig {
  return {
    dataDir: values.AGENTQ_DATA_DIR,
    qdrantUrl: values.QDRANT_URL,
    qdrantApiKey: values.QDRANT_API_KEY,
    qdrantCollectionPrefix: values.AGENTQ_QDRANT_COLLECTION_PREFIX,
    qdrantTimeoutMs: values.AGENTQ_QDRANT_TIMEOUT_MS,
    qdrantUpsertBatchSize: values.AGENTQ_QDRANT_UPSERT_BATCH,
    vectorCacheMb: values.AGENTQ_VECTOR_CACHE_MB,
    embedProvider: embedProviderOf(values.EMBED_PROVIDER, values.EMBED_MODEL),
    embedModel: values.EMBED_MODEL,
  };
}

/**
 * Only the search settings and the default tenant, for `agentq search`: other variables are not read,
 * so a bad one (say AGENTQ_PRICES) does not stop it; the worker and the API still refuse it.
 */
export function readSearchConfig(env: NodeJS.ProcessEnv = process.env): SearchConfig & { tenant: string } {
  const present = presentEnv(env);
  const tenant = readEnv({ AGENTQ_TENANT: TENANT_READER }, present);
  const search = parseSearchEnv(present);
  const problems = [...tenant.problems, ...search.problems];
  if (problems.length > 0) throw invalidConfiguration(problems);
  return { tenant: tenant.values.AGENTQ_TENANT, ...searchConfigOf(search.values) };
}

/** EMBED_PROVIDER, or what EMBED_MODEL implies when it is unset; a contradiction is refused, naming both. */
function embedProviderOf(provider: EmbedProvider | undefined, model: string | undefined): EmbedProvider {
  if (provider === undefined) return model ? 'openai' : 'local';
  if (provider === 'openai' && !model) {
    throw new AgentqError(
      'INVALID_INPUT',
      'invalid configuration: EMBED_PROVIDER=openai needs EMBED_MODEL (the embedding model on OPENAI_BASE_URL, e.g. text-embedding-3-small); or set EMBED_PROVIDER=local for the built-in model (see the configuration table in README.md)',
    );
  }
  if (provider === 'local' && model) {
    throw new AgentqError(
      'INVALID_INPUT',
      `invalid configuration: EMBED_PROVIDER=local embeds with the built-in model, but EMBED_MODEL is set ('${model}'): unset EMBED_MODEL, or set EMBED_PROVIDER=openai to use it (see the configuration table in README.md)`,
    );
  }
  return provider;
}
