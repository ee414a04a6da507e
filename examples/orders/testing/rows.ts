import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';

export interface OperationRow {
  readonly state: string;
  readonly response_status: number | null;
}

/** The retrysafe record of `orders.create@1` for one tenant's key, if any. */
export async function operationRows(
  database: SqlDatabase<SqlClient>,
  tenant: string,
  key: string,
): Promise<OperationRow[]> {
  const { rows } = await database.query<OperationRow>(
    'SELECT state, response_status FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 AND key = $3',
    [tenant, 'orders.create@1', key],
  );
  return rows;
}

export interface StoredOrder {
  readonly id: string;
  readonly cart_version: number;
  readonly total_cents: number;
}

/** A tenant's orders for one cart, as the table holds them. */
export async function orderRows(
  database: SqlDatabase<SqlClient>,
  tenant: string,
  cartId: string,
): Promise<StoredOrder[]> {
  const { rows } = await database.query<StoredOrder>(
    'SELECT id, cart_version, total_cents FROM orders WHERE tenant = $1 AND cart_id = $2 ORDER BY id',
    [tenant, cartId],
  );
  return rows;
}
