import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { type HandlerReply, invalid, type LeasedRoute, type StepCall, valid } from 'retrysafe';
import type { SqlClient } from 'retrysafe/postgres';
import { type ProviderClient, ProviderNetworkError } from '../../provider/client.js';
import { type Tokens, tenantOf } from '../infrastructure/auth.js';
import { orderLocation } from './order-view.js';
import { orderProblem, OrderProblemError } from '../infrastructure/problem.js';
import { LIVE_PAYMENT, LOCK_ORDER_TOTAL, type PaymentRow, RESERVE_PAYMENT, SETTLE_PAYMENT } from '../data/queries.js';

/** What a payment is for: the order in the path. The body carries nothing. */
export interface PaymentRequest {
  readonly order_id: string;
}

type Reservation =
  | { readonly kind: 'reserved'; readonly paymentId: string; readonly amountCents: number }
  | { readonly kind: 'no-order' }
  | { readonly kind: 'paid-elsewhere'; readonly paymentId: string };

type Charge =
  { readonly kind: 'charged'; readonly chargeId: string } | { readonly kind: 'declined'; readonly status: number };

interface PaymentParams {
  readonly Params: { readonly id: string };
}

/**
 * `POST /v1/orders/:id/payments`, in retrysafe's leased mode: the card is
 * charged through the provider as a step whose idempotency key is derived from
 * this operation, so no attempt, retry or recovery worker can charge twice.
 * The handler sees only its input and its steps, so a recovery worker can run
 * it to the end after a crash.
 */
export function createPaymentRoute(
  tokens: Tokens,
  provider: ProviderClient,
): LeasedRoute<FastifyRequest, PaymentRequest, SqlClient> {
  return {
    ...paymentOperation(provider),
    tenant: (request) => tenantOf(request, tokens),
    input(request, body) {
      const orderId = (request as FastifyRequest<PaymentParams>).params.id;
      if (
        body !== undefined &&
        (typeof body !== 'object' || body === null || Array.isArray(body) || Object.keys(body).length > 0)
      ) {
        return invalid(orderProblem('validation-failed', 'A payment takes no body: the order decides the amount.'));
      }
      return valid({ order_id: orderId });
    },
  };
}

/** The part a recovery worker needs: the operation's name and its handler. */
export function paymentOperation(
  provider: ProviderClient,
): Pick<LeasedRoute<FastifyRequest, PaymentRequest, SqlClient>, 'operation' | 'handler'> {
  return {
    operation: 'payments.create@1',
    async handler({ input, identity, step, local }) {
      const { tenant } = identity;
      const reservation = await local('reserve', (tx) => reserve(tx, tenant, input.order_id));
      if (reservation.kind === 'no-order') return orderProblem('not-found', 'There is no such order.');
      if (reservation.kind === 'paid-elsewhere') {
        return orderProblem('payment-exists', 'This order already has a payment, made with another Idempotency-Key.', {
          headers: { location: paymentLocation(input.order_id, reservation.paymentId) },
          members: { payment_id: reservation.paymentId },
        });
      }
      const charge = await step<Charge>(
        'charge',
        (call) => chargeCard(provider, call, reservation.amountCents, input.order_id),
        {
          reconcile: (call) => lookUpCharge(provider, call),
        },
      );
      const settled = await local('settle', (tx) =>
        settle(
          tx,
          tenant,
          reservation.paymentId,
          charge.kind === 'charged' ? 'succeeded' : 'declined',
          charge.kind === 'charged' ? charge.chargeId : null,
        ),
      );
      if (charge.kind === 'declined')
        return orderProblem('payment-declined', 'The payment provider declined the charge.', {
          members: { provider_status: charge.status },
        });
      return {
        status: 201,
        headers: { location: paymentLocation(input.order_id, settled.id) },
        body: paymentView(settled),
      };
    },
  };
}

async function reserve(tx: SqlClient, tenant: string, orderId: string): Promise<Reservation> {
  const [order] = (await tx.query<{ total_cents: number }>(LOCK_ORDER_TOTAL, [tenant, orderId])).rows;
  if (order === undefined) return { kind: 'no-order' };
  const paymentId = `pay_${randomBytes(12).toString('base64url')}`;
  if ((await tx.query(RESERVE_PAYMENT, [tenant, paymentId, orderId, order.total_cents])).rows.length === 1) {
    return { kind: 'reserved', paymentId, amountCents: order.total_cents };
  }
  const [live] = (await tx.query<{ id: string }>(LIVE_PAYMENT, [tenant, orderId])).rows;
  return { kind: 'paid-elsewhere', paymentId: live?.id ?? '' };
}

async function chargeCard(
  provider: ProviderClient,
  call: StepCall,
  amountCents: number,
  orderId: string,
): Promise<Charge> {
  const result = await reach(() =>
    provider.charge(
      {
        idempotencyKey: call.idempotencyKey,
        fencingToken: call.fencingToken,
        amountCents,
        currency: 'EUR',
        reference: orderId,
      },
      call.signal,
    ),
  );
  if (result.kind === 'charged') return { kind: 'charged', chargeId: result.charge.id };
  if (result.kind === 'rejected') return { kind: 'declined', status: result.status };
  // A 5xx charged nothing: the step fails, and a retry or the recovery worker tries again with the same key.
  throw providerUnavailable(`The payment provider answered ${result.status}.`);
}

async function lookUpCharge(provider: ProviderClient, call: StepCall) {
  const found = await reach(() => provider.lookup(call.idempotencyKey, call.signal));
  if (found.kind === 'found')
    return { found: true as const, result: { kind: 'charged' as const, chargeId: found.charge.id } };
  if (found.kind === 'not-found') return { found: false as const };
  throw providerUnavailable(`The payment provider's look-up answered ${found.status}.`);
}

/** A call to the provider that got no complete answer: the step fails the same way as when the provider answers 5xx. */
async function reach<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ProviderNetworkError) throw providerUnavailable('The payment provider did not answer.', error);
    throw error;
  }
}

/**
 * Thrown, not returned, so that the operation is not completed: the lease is
 * released and a retry with the same key (or the recovery worker) charges
 * with the same provider key, or finds the charge that was made.
 */
function providerUnavailable(detail: string, cause?: unknown): OrderProblemError {
  return new OrderProblemError(
    'provider-unavailable',
    `${detail} Retry with the same Idempotency-Key: the card is charged at most once.`,
    { headers: { 'retry-after': '1' } },
    { cause },
  );
}

async function settle(
  tx: SqlClient,
  tenant: string,
  paymentId: string,
  status: 'succeeded' | 'declined',
  chargeId: string | null,
): Promise<PaymentRow> {
  const [row] = (await tx.query<PaymentRow>(SETTLE_PAYMENT, [tenant, paymentId, status, chargeId])).rows;
  if (row === undefined) throw new Error(`Payment ${paymentId} was not pending.`);
  return row;
}

export function paymentLocation(orderId: string, paymentId: string): string {
  return `${orderLocation(orderId)}/payments/${encodeURIComponent(paymentId)}`;
}

export function paymentView(row: PaymentRow): HandlerReply['body'] {
  return {
    id: row.id,
    order_id: row.order_id,
    amount_cents: row.amount_cents,
    currency: 'EUR',
    status: row.status,
    charge_id: row.charge_id,
    created_at: row.created_at.toISOString(),
  };
}
