import { createHmac } from 'node:crypto';
import { RetrysafeError } from '../core/errors.js';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): an HMAC-SHA256
 * over `${id}.${timestamp}.${body}`, keyed with the base64 part of a
 * `whsec_<base64>` secret, sent as `v1,<base64 digest>`.
 */

/** The HMAC key inside a `whsec_<base64>` secret (the prefix is optional). */
export function webhookKey(secret: string): Buffer {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  if (key.length === 0)
    throw new RetrysafeError('misuse', 'A webhook secret must be "whsec_" followed by a non-empty base64 key.');
  return key;
}

/** The raw HMAC-SHA256 of one delivery: what a `v1` signature encodes. */
export function webhookDigest(key: Uint8Array, id: string, timestamp: number, body: string | Uint8Array): Buffer {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest();
}

/** The `v1,<base64>` signature of one delivery under one secret. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string | Uint8Array): string {
  return `v1,${webhookDigest(webhookKey(secret), id, timestamp, body).toString('base64')}`;
}

/** The `webhook-signature` header value: one signature per secret, space-separated, so receivers on either side of a rotation accept it. */
export function webhookSignatureHeader(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string | Uint8Array,
): string {
  return secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(' ');
}
