import { ownWorker } from '../../runtime/liveness-thread.js';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Config } from '../../../shared/config/config.js';
import type { Logger } from '../../../shared/telemetry/logger.js';
import { WEBHOOK_QUEUE } from '../../../shared/contracts/queues.js';
import type { RedisRunStore } from '../../../shared/store/redis-run-store.js';
import { bullmqConnection } from '../../../shared/bullmq/bullmq-connection.js';
import { isTerminal } from '../../../shared/contracts/run-record.js';
import { deliverWebhook, WebhookAddressError } from './deliver-webhook.js';
import type { WebhookJobData } from '../../../shared/contracts/webhook-job.js';
import { signWebhook, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './webhook-signature.js';

export interface StartWebhookWorkerOptions {
  config: Pick<
    Config,
    | 'redisUrl'
    | 'redisClusterNodes'
    | 'queuePrefix'
    | 'webhookSecrets'
    | 'webhookAllowPrivate'
    | 'webhookTimeoutMs'
    | 'webhookConcurrency'
  >;
  /** Where the run records are read at delivery time. */
  store: RedisRunStore;
  logger: Logger;
  /** The process's liveness id (startWorker): the worker's job tokens name it, so a dead process's locks are released by its peers. */
  processId?: string;
}

export interface WebhookWorker {
  close(): Promise<void>;
  /** Drops its connections without waiting (a shutdown past its deadline). */
  disconnect(): void;
}

/**
 * Delivers the webhook jobs of `agentq-webhooks`: POSTs the run record (as `GET /v1/runs/:id` serves it)
 * to the run's `webhookUrl`, signed with its tenant's secret. A non-2xx answer, a timeout or a
 * connection error fails the attempt and BullMQ retries with exponential backoff (the job's options);
 * 410 Gone, a refused address and a missing secret fail it for good.
 */
export async function startWebhookWorker({
  config,
  store,
  logger,
  processId,
}: StartWebhookWorkerOptions): Promise<WebhookWorker> {
  const process = async (job: Job<WebhookJobData>): Promise<string> => {
    const { runId } = job.data;
    const meta = await store.reads.get(runId);
    if (!meta?.webhookUrl) return 'run gone';
    const record = await store.reads.record(runId);
    // Retried or resumed since: its next end adds a delivery of its own.
    if (!record || !isTerminal(record.status)) return 'run no longer finished';
    const secret = config.webhookSecrets[meta.tenant] ?? config.webhookSecrets['*'];
    if (!secret) {
      throw new UnrecoverableError(
        `no webhook secret for tenant '${meta.tenant}': set AGENTQ_WEBHOOK_SECRETS=${meta.tenant}:<secret> (or *:<secret>) on the workers`,
      );
    }
    const body = JSON.stringify(record);
    const timestamp = Math.floor(Date.now() / 1000);
    let status: number;
    try {
      status = await deliverWebhook({
        url: meta.webhookUrl,
        body,
        timeoutMs: config.webhookTimeoutMs,
        allowPrivate: config.webhookAllowPrivate,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'agentq-webhooks',
          'x-agentq-event': 'run-end',
          'x-agentq-run-id': runId,
          'x-agentq-delivery': `${job.id}.${job.attemptsMade + 1}`,
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
        },
      });
    } catch (error) {
      if (error instanceof WebhookAddressError) throw new UnrecoverableError(error.message);
      throw error;
    }
    logger.info({ runId, status, attempt: job.attemptsMade + 1 }, 'webhook receiver answered');
    if (status >= 200 && status < 300) return `delivered (${status})`;
    const message = `webhook receiver answered ${status} for run ${runId}`;
    if (status === 410) throw new UnrecoverableError(`${message} (Gone: not retried)`);
    throw new Error(message);
  };

  const bullmq = bullmqConnection(config, 'worker');
  const worker = ownWorker(
    new Worker<WebhookJobData>(WEBHOOK_QUEUE, process, {
      connection: bullmq.connection,
      prefix: config.queuePrefix,
      concurrency: config.webhookConcurrency,
      autorun: false,
    }),
    processId,
  );
  worker.run().catch((error: unknown) => logger.error({ err: String(error) }, 'webhook worker stopped'));
  worker.on('error', (error) => logger.warn({ err: error.message }, 'webhook worker error (will retry)'));
  worker.on('failed', (job, error) =>
    logger.warn({ runId: job?.data.runId, attempt: job?.attemptsMade, err: error.message }, 'webhook delivery failed'),
  );
  await worker.waitUntilReady();
  return {
    async close() {
      await worker.close();
      bullmq.close();
    },
    disconnect() {
      worker.disconnect().catch(() => undefined);
      bullmq.close();
    },
  };
}
