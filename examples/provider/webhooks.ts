/**
 * Outgoing webhooks, signed as Standard Webhooks (https://www.standardwebhooks.com):
 * `webhook-id`, `webhook-timestamp` (unix seconds) and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "${id}.${timestamp}.${body}">`,
 * keyed with the base64-decoded part of a `whsec_...` secret: retrysafe's own
 * `signWebhook`, the function its receivers verify against.
 *
 * Delivery runs in the background and retries with backoff; retries keep the
 * same `webhook-id` so a receiver can deduplicate. Pending deliveries live in
 * memory only: a killed provider does not send them.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { signWebhook } from 'retrysafe/webhooks';
import type { Charge } from './charges.js';

export interface PaymentSucceeded {
  readonly type: 'payment.succeeded';
  readonly id: string;
  readonly data: { readonly charge: Charge };
}

export function paymentSucceeded(charge: Charge): PaymentSucceeded {
  return { type: 'payment.succeeded', id: `evt_${randomBytes(12).toString('hex')}`, data: { charge } };
}

export interface WebhookSenderOptions {
  readonly url: string;
  readonly secret: string;
  /** Waits between attempts; one more attempt than there are entries. */
  readonly retryDelaysMs: readonly number[];
  /** How long one attempt may take. */
  readonly timeoutMs: number;
  /** Stops retries and in-flight attempts, when the provider closes. */
  readonly signal: AbortSignal;
}

/** Returns `send(event)`, which starts a delivery and returns at once. */
export function webhookSender(options: WebhookSenderOptions): (event: PaymentSucceeded) => void {
  return (event) => void deliver(options, event);
}

async function deliver(options: WebhookSenderOptions, event: PaymentSucceeded): Promise<void> {
  const { retryDelaysMs, signal } = options;
  const body = JSON.stringify(event);
  for (let attempt = 0; !signal.aborted; attempt += 1) {
    if (await attemptDelivery(options, event.id, body)) return;
    const wait = retryDelaysMs[attempt];
    if (wait === undefined) return;
    await sleep(wait, undefined, { signal }).catch(() => {});
  }
}

async function attemptDelivery(
  { url, secret, timeoutMs, signal }: WebhookSenderOptions,
  id: string,
  body: string,
): Promise<boolean> {
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(secret, id, timestamp, body),
      },
      body,
      signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
    });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}
