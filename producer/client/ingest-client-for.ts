import type { Config } from '../../shared/config/config.js';
import { IngestClient } from './ingest-client.js';

const clients = new WeakMap<object, IngestClient>();

/**
 * One IngestClient per API context, shared by the document and search routes (one Redis connection and
 * one open vector store, not one per plugin). The routes close it when the app closes; closing twice is harmless.
 */
export function ingestClientFor(context: { config: Config }): IngestClient {
  let client = clients.get(context);
  if (!client) {
    client = new IngestClient({ config: context.config });
    clients.set(context, client);
  }
  return client;
}
