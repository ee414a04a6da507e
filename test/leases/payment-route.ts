import { providerClient, type ProviderClient, staleFencingTokenType } from '../../examples/provider/client.js';
import type { FetchRequest } from '../../src/adapters/fetch/index.js';
import type { LeasedRoute } from '../../src/modes/leased-route.js';
import type { SqlClient } from '../../src/store/sql-client.js';

export interface PaymentInput {
  readonly order: string;
  readonly amount: number;
}

export type ChargeStep =
  { readonly ok: true; readonly chargeId: string } | { readonly ok: false; readonly status: number };

export const PAYMENTS_TABLE = `CREATE TABLE payments (
  tenant text NOT NULL, order_id text NOT NULL, charge_id text NOT NULL, amount integer NOT NULL,
  PRIMARY KEY (tenant, order_id, charge_id))`;

/** Counts of what the handler did, to prove what ran and what came from recovery points. */
export interface Calls {
  charge: number;
  reconcile: number;
  record: number;
  /** Charges the provider refused because a newer owner's fencing token had reached it. */
  staleRefused: number;
}

export function noCalls(): Calls {
  return { charge: 0, reconcile: 0, record: 0, staleRefused: 0 };
}

/** A leased route that charges through the provider as a step (named `chargeStep`), then records the payment locally. */
export function paymentRoute(
  providerUrl: string,
  calls: Calls = noCalls(),
  chargeStep = 'charge',
): LeasedRoute<FetchRequest, PaymentInput, SqlClient> {
  const provider: ProviderClient = providerClient(providerUrl);
  return {
    operation: 'payments.create@1',
    tenant: ({ request }) => request.headers.get('x-tenant') ?? undefined,
    async handler({ input, identity, step, local }) {
      const charge = await step<ChargeStep>(
        chargeStep,
        async (call) => {
          calls.charge += 1;
          const result = await provider.charge(
            {
              idempotencyKey: call.idempotencyKey,
              fencingToken: call.fencingToken,
              amountCents: input.amount,
              currency: 'EUR',
              reference: input.order,
            },
            call.signal,
          );
          if (result.kind === 'charged') return { ok: true, chargeId: result.charge.id };
          if (result.kind === 'rejected') {
            if (result.problem.type === staleFencingTokenType) calls.staleRefused += 1;
            return { ok: false, status: result.status };
          }
          throw new Error(`provider unavailable (${result.status})`);
        },
        {
          async reconcile(call) {
            calls.reconcile += 1;
            const found = await provider.lookup(call.idempotencyKey);
            if (found.kind === 'found') return { found: true, result: { ok: true, chargeId: found.charge.id } };
            if (found.kind === 'not-found') return { found: false };
            throw new Error(`provider lookup failed (${found.status})`);
          },
        },
      );
      if (!charge.ok) return { status: 402, body: { error: 'charge refused', provider_status: charge.status } };
      const payment = await local('record-payment', async (tx) => {
        calls.record += 1;
        await tx.query('INSERT INTO payments (tenant, order_id, charge_id, amount) VALUES ($1, $2, $3, $4)', [
          identity.tenant,
          input.order,
          charge.chargeId,
          input.amount,
        ]);
        return { order: input.order, charge: charge.chargeId, amount: input.amount };
      });
      return { status: 201, headers: { location: `/payments/${payment.charge}` }, body: payment };
    },
  };
}
