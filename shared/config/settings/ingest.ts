// Setting declarations: read shared/config/settings/all-settings.ts first (how to add one).
import { decimal, integer } from '../setting-builders.js';
import { defineArea, type AreaConfig } from '../settings-area.js';

/** Ingestion: parsing, chunking and the local embedding model. */
export const ingestArea = defineArea({
  title: 'Ingestion and the local embedding model',
  intro:
    'How workers parse and chunk documents at ingest, and how the built-in embedding model (`EMBED_PROVIDER=local`) runs and weighs in hybrid searches.',
  settings: {
    ingestConcurrency: integer({
      env: 'AGENTQ_INGEST_CONCURRENCY',
      min: 0,
      default: 2,
      doc: 'Parse threads per worker process (documents parsed at once; the worker holds up to 4× as many ingest jobs so I/O overlaps parsing); 0 = this process takes no ingest jobs.',
      when: '0 on workers that should only run steps.',
    }),
    ingestMaxBytes: integer({
      env: 'AGENTQ_INGEST_MAX_BYTES',
      min: 1,
      default: 50 * 1024 * 1024,
      shownDefault: '`52428800` (50 MiB)',
      doc: 'Larger documents are refused at ingest (CLI: failed in the summary; HTTP upload: 413).',
    }),
    ingestParseTimeoutMs: integer({
      env: 'AGENTQ_INGEST_PARSE_TIMEOUT_MS',
      min: 100,
      default: 120_000,
      doc: 'A document still parsing after this long fails with `PARSE_ERROR` and its thread is replaced.',
    }),
    ingestWriteTimeoutMs: integer({
      env: 'AGENTQ_INGEST_WRITE_TIMEOUT_MS',
      min: 100,
      default: 60_000,
      doc: 'At ingest, a document’s bytes go to Redis in 1 MiB pieces on their own connection; each piece may take this long (the command timeout is for small commands).',
    }),
    chunkTokens: integer({
      env: 'AGENTQ_CHUNK_TOKENS',
      min: 32,
      default: 400,
      doc: 'Token budget of one chunk, overlap included (cl100k_base tokens, the encoding of OpenAI’s embedding models).',
    }),
    chunkOverlapTokens: integer({
      env: 'AGENTQ_CHUNK_OVERLAP_TOKENS',
      min: 0,
      default: 50,
      doc: 'Tokens (whole sentences) a chunk repeats from the end of the previous chunk of the same section; capped at half of `AGENTQ_CHUNK_TOKENS`.',
    }),
    localEmbedThreads: integer({
      env: 'AGENTQ_LOCAL_EMBED_THREADS',
      min: 1,
      default: 1,
      doc: 'Threads per process that run the local model (each its own copy, ~130 MB).',
      when: 'More threads embed more chunks at once when cores are free (2: 9.1 → 12.7 chunks/s measured on busy shared cores).',
    }),
    localEmbedBackgroundThreads: integer({
      env: 'AGENTQ_LOCAL_EMBED_BACKGROUND_THREADS',
      min: 1,
      default: 2,
      doc: 'Threads per worker process that add chunks’ vectors with the local model after ingest (each its own copy, ~130 MB, stopped after a minute without work). They run at low CPU priority (nice 10, Linux): they take the cores parsing and questions leave free.',
      when: '1 on a machine with one core or little memory.',
    }),
    localEmbedBackgroundNice: integer({
      env: 'AGENTQ_LOCAL_EMBED_BACKGROUND_NICE',
      min: 0,
      max: 19,
      default: 10,
      doc: 'CPU niceness of those background threads (Linux; 0 = the same priority as everything else). At 10 they take what parsing, questions and other processes leave; on a machine kept busy by other work they may wait long.',
      when: 'Lower it (e.g. 0) when vectors must keep pace on a machine that is never idle.',
    }),
    localEmbedDocumentTokens: integer({
      env: 'AGENTQ_LOCAL_EMBED_DOCUMENT_TOKENS',
      min: 8,
      max: 128,
      default: 128,
      doc: 'Tokens of a chunk’s leading window the local model embeds (queries are read up to 128, all the model takes). Its cost grows faster than its input: ~100 ms of CPU per chunk at 128, ~42 at 64.',
    }),
    localDenseWeight: decimal({
      env: 'AGENTQ_LOCAL_DENSE_WEIGHT',
      min: 0,
      max: 10,
      default: 0.3,
      doc: 'Hybrid searches with the local model add this much of its normalised cosine to BM25’s normalised score; 0 = lexical ranking.',
    }),
  },
  // Overlap must leave room for new text in every chunk.
  configOf: (values) => ({
    ...values,
    chunkOverlapTokens: Math.min(values.chunkOverlapTokens, Math.floor(values.chunkTokens / 2)),
  }),
});

export type IngestConfig = AreaConfig<typeof ingestArea>;
