import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { RedisConnection } from '../../shared/redis/connect-redis.js';
import type { FlushRecord } from '../../shared/operations/batches/provider-batch-flush-record.js';
import type { Keys } from '../../shared/store/keys.js';
import type { RedisRunStore } from '../../shared/store/redis-run-store.js';
import type { Telemetry } from '../../shared/telemetry/telemetry.js';
import { parseCallId } from './provider-batch-call.js';

/** `provider_batch <id>`: one span per provider batch, from its intent to its requests' wake-up. */
export function emitProviderBatchSpan(
  telemetry: Telemetry,
  provider: string,
  batchId: string,
  flush: FlushRecord,
): void {
  if (!telemetry.enabled) return;
  const span = telemetry.tracer.startSpan(`provider_batch ${flush.batchId ?? flush.id}`, {
    kind: SpanKind.CLIENT,
    startTime: flush.createdAt,
    attributes: {
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': flush.model,
      'agentq.batch.id': batchId,
      'agentq.provider_batch.flush': flush.id,
      'agentq.provider_batch.id': flush.batchId ?? '',
      'agentq.provider_batch.status': flush.status ?? 'unknown',
      'agentq.provider_batch.requests': flush.requests,
      'agentq.provider_batch.answered': flush.usage?.answered ?? 0,
      'gen_ai.usage.input_tokens': flush.usage?.inputTokens ?? 0,
      'gen_ai.usage.output_tokens': flush.usage?.outputTokens ?? 0,
    },
  });
  if (flush.status !== 'completed')
    span.setStatus({ code: SpanStatusCode.ERROR, message: `provider batch ${flush.status}` });
  span.end(flush.finishedAt);
}

/** `provider_batch.wait`: one span per parked call answered, in its run's trace, from its park to its answer. */
export async function emitWaitSpans(
  { telemetry, store, redis, keys }: { telemetry: Telemetry; store: RedisRunStore; redis: RedisConnection; keys: Keys },
  batchId: string,
  flush: FlushRecord,
  saved: readonly string[],
): Promise<void> {
  for (const customId of saved) {
    const call = parseCallId(customId);
    if (!call) continue;
    const meta = await store.reads.get(call.runId);
    const held = await redis.hget(keys.providerBatch(batchId).calls, customId);
    const parkedAt = held ? ((JSON.parse(held) as { at?: number }).at ?? flush.createdAt) : flush.createdAt;
    const span = telemetry.tracer.startSpan(
      'provider_batch.wait',
      {
        startTime: parkedAt,
        attributes: {
          'agentq.run.id': call.runId,
          'agentq.step.id': call.stepId,
          'agentq.provider_batch.id': flush.batchId ?? '',
          'agentq.provider_batch.request': customId,
        },
      },
      telemetry.runContext(meta?.trace),
    );
    span.end();
  }
}
