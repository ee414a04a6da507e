import { problem, type ProblemCode } from '../core/answer/problems.js';
import { problemReply, type Reply } from '../core/answer/reply.js';
import { readJsonPayload } from '../inbox/json-payload.js';
import { webhookStore } from '../postgres/postgres-webhook-store.js';
import type { SqlDatabase } from '../store/sql-client.js';
import {
  type VerificationFailure,
  verifyRules,
  verifyWebhook,
  type VerifyOptions,
  type WebhookHeaders,
} from './verify.js';
import { checkOptions, type OptionRules, TIMER_MAX_SECONDS, wholeSeconds } from '../core/option-rules.js';

export interface WebhookReceiverOptions extends VerifyOptions {
  /** Names the sender (`payments`, say); its events and inbox records are kept under this name. */
  readonly receiver: string;
  /** Seconds for `Retry-After` when the store is down. Default 1. */
  readonly retryAfterSeconds?: number;
  /** Base URI of problem `type`s. Default `https://retrysafe.dev/problems/`. */
  readonly problemBase?: string;
}

/** `Retry-After` asks the sender to wait: a whole number of seconds, within what a timer holds. */
export const receiverRules = {
  retryAfterSeconds: wholeSeconds(1, TIMER_MAX_SECONDS),
  ...verifyRules,
} as const satisfies OptionRules<WebhookReceiverOptions>;

/** A delivery as it arrived: the headers and the body bytes exactly as received, unparsed. */
export interface WebhookDelivery {
  readonly headers: WebhookHeaders;
  readonly rawBody: Uint8Array | string;
}

/** The answer for the sender, and what it means. */
export type WebhookReceipt = Reply &
  /** Verified and recorded for processing: 202. */
  (
    | { readonly kind: 'recorded'; readonly id: string }
    /** Verified, and recorded by an earlier delivery of the same `webhook-id`: 202 too, so the sender stops. */
    | { readonly kind: 'duplicate'; readonly id: string }
    /** Not verified or not readable: a problem answer, and nothing was stored. */
    | { readonly kind: 'rejected'; readonly code: ProblemCode }
    /** The store failed: 503, so that the sender tries again later. */
    | { readonly kind: 'unavailable'; readonly error: unknown }
  );

const ACCEPTED: Reply = { status: 202, headers: {}, body: new Uint8Array() };

/**
 * Receives one webhook delivery, framework-free: verifies its signature over
 * the raw body, then records the event durably before answering 2xx, so an
 * accepted event is never lost. A redelivery of a recorded `webhook-id` is
 * accepted again and changes nothing. Processing happens later, through the
 * inbox (`WebhookWorker`).
 */
export async function receiveWebhook<Tx>(
  database: SqlDatabase<Tx>,
  options: WebhookReceiverOptions,
  delivery: WebhookDelivery,
): Promise<WebhookReceipt> {
  checkOptions(receiverRules, options);
  const reject = (code: ProblemCode, detail: string): WebhookReceipt => ({
    kind: 'rejected',
    code,
    ...problemReply(problem(code, detail), options.problemBase),
  });
  const verification = verifyWebhook(options, delivery.headers, delivery.rawBody);
  if (!verification.ok) return rejectUnverified(verification.reason, reject);
  const { id, timestamp } = verification;
  const payload = readJsonPayload(delivery.rawBody);
  if (!payload.ok) return reject('webhook-payload-invalid', 'The webhook body is not UTF-8 JSON.');
  if (Buffer.byteLength(id) > 255) return reject('webhook-payload-invalid', 'The webhook-id is longer than 255 bytes.');
  let recording;
  try {
    recording = await webhookStore(database).record({
      receiver: options.receiver,
      id,
      payloadText: payload.text,
      sentAtSeconds: timestamp,
    });
  } catch (error) {
    const retryAfter = options.retryAfterSeconds ?? 1;
    const detail = 'The webhook could not be recorded; nothing was accepted. Retry later.';
    return {
      kind: 'unavailable',
      error,
      ...problemReply(problem('store-unavailable', detail, { retryAfter }), options.problemBase),
    };
  }
  if (recording === 'unstorable')
    return reject('webhook-payload-invalid', 'The webhook body cannot be stored as JSON.');
  return { kind: recording, id, ...ACCEPTED };
}

function rejectUnverified(
  reason: VerificationFailure,
  reject: (code: ProblemCode, detail: string) => WebhookReceipt,
): WebhookReceipt {
  switch (reason) {
    case 'missing-header':
      return reject(
        'webhook-signature-invalid',
        'The webhook-id, webhook-timestamp and webhook-signature headers are all required.',
      );
    case 'invalid-timestamp':
      return reject('webhook-signature-invalid', 'The webhook-timestamp header is not a number of seconds.');
    case 'outside-tolerance':
      return reject('webhook-timestamp-invalid', 'The webhook-timestamp is too far from the current time.');
    case 'no-matching-signature':
      return reject('webhook-signature-invalid', 'No signature in webhook-signature matches the body.');
  }
}
