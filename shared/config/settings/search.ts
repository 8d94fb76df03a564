// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { AgentqError } from '../../contracts/errors.js';
import { choice, integer, matching, text, url } from '../setting-builders.js';
import { CONFIGURATION_REFERENCE, defineArea, type AreaConfig } from '../settings-area.js';

export type EmbedProvider = 'local' | 'openai' | 'none';

/**
 * Where the ingested documents are and who embeds queries: what `agentq search` needs to open the vector
 * store, read by it without the rest (shared/config/search-config.ts).
 */
export const searchArea = defineArea({
  title: 'Documents and search',
  intro:
    'Where ingested documents are kept and who embeds them. `agentq search` reads only these and `AGENTQ_TENANT` (all settings when the query is embedded).',
  settings: {
    dataDir: text({
      env: 'AGENTQ_DATA_DIR',
      default: '.agentq',
      doc: 'Local data: the private Redis’s AOF, the embedded vector store.',
    }),
    qdrantUrl: url({
      env: 'QDRANT_URL',
      example: 'http://127.0.0.1:6333',
      doc: 'Qdrant server for document chunks; unset: the embedded SQLite store `<AGENTQ_DATA_DIR>/vectors.sqlite`.',
      when: 'When workers, API and CLI run on more than one machine (the embedded store needs one shared folder).',
    }),
    qdrantApiKey: text({
      env: 'QDRANT_API_KEY',
      secret: true,
      doc: 'Sent as Qdrant’s `api-key` header on every request; needs read-write access.',
      when: 'Qdrant Cloud, or a server started with `QDRANT__SERVICE__API_KEY`.',
    }),
    qdrantCollectionPrefix: matching({
      env: 'AGENTQ_QDRANT_COLLECTION_PREFIX',
      default: 'agentq',
      pattern: /^[A-Za-z0-9_-]{1,48}$/,
      allowed: "1-48 characters of letters, digits, '_' or '-'",
      doc: 'agentq keeps its data in the Qdrant collections `<prefix>_chunks` and `<prefix>_collections`.',
      when: 'Give two agentq installations sharing one Qdrant different prefixes.',
    }),
    qdrantTimeoutMs: integer({
      env: 'AGENTQ_QDRANT_TIMEOUT_MS',
      min: 100,
      default: 30_000,
      doc: 'Per Qdrant request; a slower answer is a retryable `TIMEOUT` (each request is tried up to 4 times on 5xx, timeouts and connection errors).',
    }),
    qdrantUpsertBatchSize: integer({
      env: 'AGENTQ_QDRANT_UPSERT_BATCH',
      min: 1,
      default: 256,
      doc: 'Points per upsert request; a document’s chunks are written in batches of this many.',
    }),
    vectorCacheMb: integer({
      env: 'AGENTQ_VECTOR_CACHE_MB',
      min: 0,
      default: 128,
      doc: 'Embedded store: MiB of vectors each process keeps in memory to score dense searches in JS (~65k vectors of 512 at 128); a larger collection, and a search across all collections, is scanned by sqlite-vec; `0` = always sqlite-vec.',
      when: 'Raise it when collections outgrow it and memory allows; lower it on small machines.',
    }),
    embedModel: text({
      env: 'EMBED_MODEL',
      doc: 'Embedding model on the chat model’s endpoint (`OPENAI_BASE_URL`, `OPENAI_API_KEY`), e.g. `text-embedding-3-small`; setting it makes `openai` the default `EMBED_PROVIDER`.',
    }),
    embedProvider: choice({
      env: 'EMBED_PROVIDER',
      values: ['local', 'openai', 'none'],
      allowed:
        'local (the built-in model, no endpoint), openai (EMBED_MODEL on OPENAI_BASE_URL) or none (lexical search only)',
      shownDefault: '`openai` when `EMBED_MODEL` is set, else `local`',
      doc: 'Who embeds chunks at ingest and queries at search: `local` (the built-in model, offline, in worker threads), `openai` (`EMBED_MODEL` on `OPENAI_BASE_URL`) or `none` (lexical search; `multi-agent` recalls experts lexically).',
      when: '`none` when no model may run; `local` with `EMBED_MODEL` set is refused as a contradiction.',
    }),
  },
  configOf: (values) => ({ ...values, embedProvider: embedProviderOf(values.embedProvider, values.embedModel) }),
});

/** Where the ingested documents are and who embeds queries. */
export type SearchConfig = AreaConfig<typeof searchArea>;

/** EMBED_PROVIDER, or what EMBED_MODEL implies when it is unset; a contradiction is refused, naming both. */
function embedProviderOf(provider: EmbedProvider | undefined, model: string | undefined): EmbedProvider {
  if (provider === undefined) return model ? 'openai' : 'local';
  if (provider === 'openai' && !model) {
    throw new AgentqError(
      'INVALID_INPUT',
      `invalid configuration: EMBED_PROVIDER=openai needs EMBED_MODEL (the embedding model on OPENAI_BASE_URL, e.g. text-embedding-3-small); or set EMBED_PROVIDER=local for the built-in model (see ${CONFIGURATION_REFERENCE})`,
    );
  }
  if (provider === 'local' && model) {
    throw new AgentqError(
      'INVALID_INPUT',
      `invalid configuration: EMBED_PROVIDER=local embeds with the built-in model, but EMBED_MODEL is set ('${model}'): unset EMBED_MODEL, or set EMBED_PROVIDER=openai to use it (see ${CONFIGURATION_REFERENCE})`,
    );
  }
  return provider;
}
