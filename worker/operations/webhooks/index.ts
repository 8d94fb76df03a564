/** Webhooks: the run store's onFinished hook that adds delivery jobs, the delivery worker, and signatures. */
export {
  createRunFinishedHook,
  type RunFinishedHook,
  type RunFinishedHookOptions,
} from '../../../shared/operations/runs/run-finished-hook.js';
export { startWebhookWorker, type StartWebhookWorkerOptions, type WebhookWorker } from './start-webhook-worker.js';
export {
  signWebhook,
  verifyWebhookSignature,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  type VerifyWebhookOptions,
} from './webhook-signature.js';
export { webhookJobId, type WebhookJobData } from '../../../shared/contracts/webhook-job.js';
