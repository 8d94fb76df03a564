import { AgentqError } from '../../contracts/errors.js';

/** How a producer learns whether its model provider has a Batch API. */
export interface ProviderBatchesCheck {
  /** Whether the provider has one (false: it answered 404 on its batches route). */
  supported(): Promise<boolean>;
  /** AGENTQ_PROVIDER_BATCH_FALLBACK: `live` runs a batch live when the provider has none. */
  fallback: 'none' | 'live';
}

/**
 * Whether a batch asking for the provider's Batch API gets it: true; false (it runs live, the fallback
 * asked for); or refused at submission with a message that says what to do — never a run stuck waiting
 * on a provider that cannot answer it.
 */
export async function checkProviderBatches(check: ProviderBatchesCheck | undefined): Promise<boolean> {
  if (!check)
    throw new AgentqError(
      'PROVIDER_BATCH_UNSUPPORTED',
      'providerBatch: this producer has no model endpoint to send batches to; set LLM_MODEL (and OPENAI_BASE_URL) where batches are submitted',
    );
  let supported: boolean;
  try {
    supported = await check.supported();
  } catch (error) {
    throw new AgentqError(
      'UNAVAILABLE',
      `providerBatch: could not ask the provider whether it has a Batch API: ${(error as Error).message}; try again, or submit without providerBatch`,
      { retryable: true, cause: error },
    );
  }
  if (supported) return true;
  if (check.fallback === 'live') return false;
  throw new AgentqError(
    'PROVIDER_BATCH_UNSUPPORTED',
    'providerBatch: the model provider has no Batch API (it answered 404 on /v1/batches); submit without providerBatch, or set AGENTQ_PROVIDER_BATCH_FALLBACK=live to run such batches live',
  );
}
