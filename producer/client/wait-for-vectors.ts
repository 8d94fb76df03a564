import { AgentqError } from '../../shared/contracts/errors.js';
import type { CollectionStatus } from '../../shared/retrieval/collection-status.js';

export interface WaitForVectorsOptions {
  /** @default 1 hour */
  timeoutMs?: number;
  /** @default 500 */
  intervalMs?: number;
  /** Called with the counts each time the pending count changes. */
  onProgress?: (vectors: { added: number; pending: number }) => void;
}

/**
 * Polls a collection's status until none of its chunks waits for a vector (IngestClient.waitForVectors);
 * null when the collection does not exist, the status at once when it has no vector progress to wait for.
 */
export async function waitForVectors(
  read: () => Promise<CollectionStatus | null>,
  { timeoutMs = 60 * 60_000, intervalMs = 500, onProgress }: WaitForVectorsOptions = {},
): Promise<CollectionStatus | null> {
  const deadline = Date.now() + timeoutMs;
  let seen = -1;
  for (;;) {
    const status = await read();
    if (!status?.vectors) return status;
    if (status.vectors.pending !== seen) {
      seen = status.vectors.pending;
      onProgress?.(status.vectors);
    }
    if (status.vectors.pending === 0) return status;
    if (Date.now() > deadline)
      throw new AgentqError(
        'TIMEOUT',
        `collection ${status.name} still has ${status.vectors.pending} of ${status.chunks} chunks without a vector after ${timeoutMs} ms; are workers with an embedder (EMBED_PROVIDER) running?`,
        { retryable: true },
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
