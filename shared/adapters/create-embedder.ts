import type { Config } from '../config/config.js';
import type { Embedder } from '../ports/embedder.js';
import { LocalEmbedder } from './local-embedder/local-embedder.js';
import { OpenAIEmbedder } from './openai/openai-embedder.js';

/** Where an OpenAI-compatible endpoint is, as the configuration names it. */
export interface EndpointOptions {
  baseURL?: string;
  apiKey?: string;
  timeoutMs: number;
}

/** The endpoint the configuration names (OPENAI_BASE_URL, OPENAI_API_KEY, AGENTQ_LLM_TIMEOUT_MS). */
export function endpointOf(config: Config): EndpointOptions {
  return {
    ...(config.openaiBaseUrl === undefined ? {} : { baseURL: config.openaiBaseUrl }),
    ...(config.openaiApiKey === undefined ? {} : { apiKey: config.openaiApiKey }),
    timeoutMs: config.llmTimeoutMs,
  };
}

/**
 * The embedder EMBED_PROVIDER names: the built-in model (`local`, the default without EMBED_MODEL; its
 * threads start on the first text to embed), EMBED_MODEL on the endpoint (`openai`), or none (`none`).
 * Workers and the producer's searches build the same one, so a query is embedded as its chunks were.
 * `background`: the one that adds chunks' vectors after ingest — for the built-in model, its own
 * AGENTQ_LOCAL_EMBED_BACKGROUND_THREADS threads at low CPU priority, apart from the threads that embed
 * queries, so a search never waits behind a page of chunks.
 */
export function createEmbedder(
  config: Config,
  endpoint: EndpointOptions = endpointOf(config),
  role: 'queries' | 'background' = 'queries',
): Embedder | undefined {
  if (config.embedProvider === 'local')
    return new LocalEmbedder({
      threads: role === 'background' ? config.localEmbedBackgroundThreads : config.localEmbedThreads,
      ...(role === 'background' ? { background: { nice: config.localEmbedBackgroundNice } } : {}),
      denseWeight: config.localDenseWeight,
      documentTokens: config.localEmbedDocumentTokens,
    });
  if (config.embedProvider === 'openai' && config.embedModel)
    return new OpenAIEmbedder({ model: config.embedModel, batchSize: config.embedBatchSize, ...endpoint });
  return undefined;
}
