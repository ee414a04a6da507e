export { signWebhook, webhookSignatureHeader } from './sign.js';
export {
  verifyWebhook,
  type VerificationFailure,
  type VerifyOptions,
  type WebhookHeaders,
  type WebhookVerification,
} from './verify.js';
export { receiveWebhook, type WebhookDelivery, type WebhookReceipt, type WebhookReceiverOptions } from './receive.js';
export { pruneWebhookEvents } from './prune.js';
export {
  WebhookWorker,
  type ReceivedWebhook,
  type WebhookWorkerOptions,
  type WebhookWorkerReport,
} from './webhook-worker.js';
