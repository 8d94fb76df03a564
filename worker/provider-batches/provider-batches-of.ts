import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import { endpointOf } from '../../shared/adapters/create-embedder.js';
import { OpenAIProviderBatches } from '../../shared/adapters/openai/openai-provider-batches.js';
import type { Config } from '../../shared/config/config.js';
import type { ProviderBatches } from '../../shared/ports/provider-batches.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { StepQueues } from '../../shared/store/step-queues.js';
import type { Logger } from '../../shared/telemetry/logger.js';
import type { Telemetry } from '../../shared/telemetry/telemetry.js';
import { ProviderBatchCollector } from './provider-batch-collector.js';
import type { FlushPoint } from './provider-batch-flush.js';
import { ProviderBatchRouter } from './provider-batch-router.js';
import { TenantBudget } from '../../shared/operations/limits/tenant-budget.js';
import { RedisMetrics } from '../../shared/operations/metrics/redis-metrics.js';

interface ProviderBatchesOfOptions {
  config: Config;
  redis: RedisConnection;
  store: RedisRunStore;
  stepQueues: StepQueues;
  logger: Logger;
  telemetry: Telemetry;
  /** @default the OpenAI adapter on OPENAI_BASE_URL for LLM_MODEL (none without LLM_MODEL) */
  api?: ProviderBatches;
  onPoint?: (point: FlushPoint, flushId: string) => void | Promise<void>;
}

/**
 * A worker's part of the provider's Batch API: the router its model calls consult and the
 * collector (started by the caller; one worker at a time does its rounds). None without a chat model.
 */
export function providerBatchesOf({
  config,
  redis,
  store,
  stepQueues,
  logger,
  telemetry,
  api,
  onPoint,
}: ProviderBatchesOfOptions): { router: ProviderBatchRouter; collector: ProviderBatchCollector } | undefined {
  const batches =
    api ??
    // GigaChat's chat model has no OpenAI Batch API behind it: its runs call the model live.
    (config.llmModel && config.llmProvider === 'openai'
      ? new OpenAIProviderBatches({
          model: config.llmModel,
          toolExamples: config.toolExamplesInDescription ? 'description' : 'omit',
          ...endpointOf(config),
        })
      : undefined);
  if (!batches) return undefined;
  const router = new ProviderBatchRouter({ redis, keys: store.keys, api: batches, parkMs: config.providerBatchParkMs });
  const collector = new ProviderBatchCollector({
    redis,
    keys: store.keys,
    store,
    stepQueues,
    api: batches,
    logger,
    telemetry,
    maxRequests: config.providerBatchMaxRequests,
    maxBytes: config.providerBatchMaxBytes,
    flushMs: config.providerBatchFlushMs,
    pollMs: config.providerBatchPollMs,
    resultsWaitMs: config.providerBatchResultsWaitMs,
    fallback: config.providerBatchFallback,
    prices: config.prices,
    batchPrices: config.batchPrices,
    retentionSeconds: config.retentionSeconds,
    leaseMs: config.providerBatchLeaseMs,
    tenantBudget: new TenantBudget(redis, store.keys, {
      defaults: config.tenantBudgetDefaults,
      metrics: new RedisMetrics(redis, config.keyPrefix),
    }),
    ...(onPoint ? { onPoint } : {}),
  });
  return { router, collector };
}
