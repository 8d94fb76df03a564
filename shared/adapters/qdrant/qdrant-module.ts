import { createRequire } from 'node:module';
import type * as QdrantClientRest from '@qdrant/js-client-rest';
import type { QdrantClient } from '@qdrant/js-client-rest';

let loaded: typeof QdrantClientRest | undefined;

/**
 * @qdrant/js-client-rest (its CommonJS entry, with undici), required when the first QdrantVectorStore is
 * made, not when this module is imported: `agentq/worker` exports QdrantVectorStore, and a worker that
 * never makes one should not load the client at start. One entry for every use, so the error classes
 * qdrant-request.ts checks with `instanceof` are those the client throws.
 */
export function qdrantModule(): typeof QdrantClientRest {
  loaded ??= createRequire(import.meta.url)('@qdrant/js-client-rest') as typeof QdrantClientRest;
  return loaded;
}

/** A Qdrant client for a store: no compatibility check at construction, the API key as a header. */
export function createQdrantClient({
  url,
  timeoutMs,
  apiKey,
}: {
  url: string;
  timeoutMs: number;
  apiKey?: string | undefined;
}): QdrantClient {
  const { QdrantClient: Client } = qdrantModule();
  // The key goes in as a header rather than `apiKey`: the client would otherwise console.warn (outside
  // our JSON logs) for every http URL, and http is normal inside a compose network.
  return new Client({
    url,
    timeout: timeoutMs,
    checkCompatibility: false,
    ...(apiKey ? { headers: { 'api-key': apiKey } } : {}),
  });
}
