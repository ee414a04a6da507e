import type { FastifyInstance } from 'fastify';
import { leased } from 'retrysafe/fastify';
import type { Idempotency } from 'retrysafe';
import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import type { ProviderClient } from '../../provider/client.js';
import { authenticated, type Tokens } from '../infrastructure/auth.js';
import { createPaymentRoute, paymentView } from './create-payment.js';
import { orderProblem } from '../infrastructure/problem.js';
import { type PaymentRow, READ_PAYMENT } from '../data/queries.js';

export interface PaymentRoutesOptions {
  readonly database: SqlDatabase<SqlClient>;
  /** A configuration of its own: a payment already made with another key (409) is a lasting answer here, so it is stored. */
  readonly idempotency: Idempotency<SqlClient>;
  readonly tokens: Tokens;
  readonly provider: ProviderClient;
}

interface PaymentParams {
  readonly Params: { readonly id: string; readonly payment_id: string };
}

export function paymentRoutes(
  app: FastifyInstance,
  { database, idempotency, tokens, provider }: PaymentRoutesOptions,
): void {
  app.post('/v1/orders/:id/payments', leased(idempotency, createPaymentRoute(tokens, provider)));

  app.get<PaymentParams>(
    '/v1/orders/:id/payments/:payment_id',
    authenticated<PaymentParams>(tokens, async (request, tenant) => {
      const [payment] = (
        await database.query<PaymentRow>(READ_PAYMENT, [tenant, request.params.id, request.params.payment_id])
      ).rows;
      if (payment === undefined) return orderProblem('not-found', 'There is no such payment.');
      return { status: 200, body: paymentView(payment) };
    }),
  );
}
