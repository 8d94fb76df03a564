import type { TestEnv } from './test-env.js';
import { eventually } from './test-env.js';

/**
 * Submits the questions as a batch of `two-turns` runs (or `options.graph`) through the provider's Batch
 * API and waits until it is no longer running; → the batch and its results.
 */
export async function answerAsProviderBatch(
  env: TestEnv,
  questions: string[],
  options: { graph?: string; concurrency?: number } = {},
) {
  const { batch } = await env.client.batches.submit({
    collection: 'docs',
    questions: questions.map((question) => ({ question })),
    options: { graph: 'two-turns', ...options },
    providerBatch: true,
  });
  const done = await eventually(
    async () => {
      const record = await env.client.batches.get(batch.id);
      return record && record.status !== 'running' ? record : undefined;
    },
    30_000,
    `batch ${batch.id} to finish`,
  );
  return { batch: done, results: (await env.client.batches.results(batch.id))! };
}

/** The settings of a test env whose model calls go to the scripted server at `url`, its Batch API polled often. */
export function providerBatchEnv(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    OPENAI_BASE_URL: url,
    LLM_MODEL: 'scripted-chat',
    AGENTQ_PROVIDER_BATCH_FLUSH_MS: '60000',
    AGENTQ_PROVIDER_BATCH_POLL_MS: '100',
    AGENTQ_LLM_TIMEOUT_MS: '2000',
    ...extra,
  };
}
