import { idempotency, type Idempotency } from '../../src/modes/idempotency.js';
import type { LeasedOperation } from '../../src/modes/leased-route.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';

/** What `retrysafe recover --module` imports in the tests: one leased operation and the configuration. */
export const operations: readonly LeasedOperation<{ readonly amount: number }, SqlClient>[] = [
  {
    operation: 'payments.create@1',
    async handler({ input, identity, step, local }) {
      const charge = await step('charge', (call) => Promise.resolve({ id: `ch_${call.idempotencyKey.slice(3, 15)}` }));
      await local('record-payment', (tx) =>
        tx.query('INSERT INTO recovered_payments (key, charge, amount) VALUES ($1, $2, $3)', [
          identity.key,
          charge.id,
          input.amount,
        ]),
      );
      return {
        status: 201,
        headers: { location: `/payments/${charge.id}` },
        body: { charge: charge.id, amount: input.amount },
      };
    },
  },
];

export function config(database: SqlDatabase<SqlClient>): Idempotency<SqlClient> {
  return idempotency({
    store: postgresStore(database),
    leaseSeconds: 10,
    retention: { responseSeconds: 600, tombstoneSeconds: 3600 },
  });
}
