import type { FastifyInstance } from 'fastify';
import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import { receiveWebhook } from 'retrysafe/webhooks';
import { PROVIDER_RECEIVER } from '../messaging/provider-events.js';

export interface ProviderWebhookRouteOptions {
  readonly database: SqlDatabase<SqlClient>;
  /** `whsec_` secrets; two during a rotation. */
  readonly secrets: readonly string[];
}

/**
 * `POST /webhooks/provider`: verifies the provider's Standard Webhooks
 * signature over the raw body and records the event before answering 202; a
 * `WebhookWorker` (`provider-events.ts`) processes it later. Registered in a
 * plugin of its own that keeps JSON bodies as bytes, since a re-serialised
 * body would not match its signature; the other routes keep their parser.
 */
export function providerWebhookRoute(app: FastifyInstance, { database, secrets }: ProviderWebhookRouteOptions): void {
  void app.register((webhooks, _options, done) => {
    webhooks.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, parsed) =>
      parsed(null, body),
    );
    webhooks.post<{ Body: Buffer | undefined }>('/webhooks/provider', async (request, reply) => {
      const receipt = await receiveWebhook(
        database,
        { receiver: PROVIDER_RECEIVER, secrets },
        {
          headers: request.headers,
          // Fastify skips the parser for an empty body.
          rawBody: request.body ?? new Uint8Array(),
        },
      );
      if (receipt.kind === 'unavailable') request.log.error({ err: receipt.error }, 'webhook not recorded');
      const { body } = receipt;
      return reply
        .code(receipt.status)
        .headers(receipt.headers)
        .send(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
    });
    done();
  });
}
