import { RetrysafeError } from '../../core/errors.js';
import { checkOptions, milliseconds, type OptionRules } from '../../core/option-rules.js';
import { webhookKey, webhookSignatureHeader } from '../../webhooks/sign.js';
import type { OutboxMessage } from '../outbox.js';
import type { PublishResult, Transport } from '../transport.js';

export interface WebhookTransportOptions {
  /** Where to POST; a function picks the endpoint per message (by topic, say). */
  readonly url: string | ((message: OutboxMessage) => string);
  /** `whsec_<base64>` secrets. During a rotation give both: each delivery carries one signature per secret. */
  readonly secrets: string | readonly string[];
  /** One delivery attempt, until the response headers. Default 10 000 ms. */
  readonly timeoutMs?: number;
  /** Default: the global `fetch`. */
  readonly fetch?: typeof fetch;
}

export const webhookTransportRules = {
  timeoutMs: milliseconds(1),
} as const satisfies OptionRules<WebhookTransportOptions>;

/**
 * Delivers outbox messages as webhooks signed per Standard Webhooks: the
 * outbox id is the `webhook-id`, the same on every attempt, so the receiver
 * can deduplicate. Only a 2xx answer counts as delivered.
 */
export function webhookTransport(options: WebhookTransportOptions): Transport {
  checkOptions(webhookTransportRules, options);
  const secrets = typeof options.secrets === 'string' ? [options.secrets] : [...options.secrets];
  if (secrets.length === 0) throw new RetrysafeError('misuse', 'A webhook transport needs at least one secret.');
  // A malformed secret fails here, at start-up, rather than on every delivery.
  for (const secret of secrets) webhookKey(secret);
  const send = options.fetch ?? fetch;
  return {
    async publish(message: OutboxMessage): Promise<PublishResult> {
      const body = JSON.stringify(message.payload);
      const timestamp = Math.floor(Date.now() / 1000);
      const url = typeof options.url === 'string' ? options.url : options.url(message);
      const headers = new Headers(message.headers);
      headers.set('content-type', 'application/json');
      headers.set('webhook-id', message.id);
      headers.set('webhook-timestamp', String(timestamp));
      headers.set('webhook-signature', webhookSignatureHeader(secrets, message.id, timestamp, body));
      const response = await send(url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`The webhook receiver answered ${response.status}.`);
      return 'stored';
    },
  };
}
