/**
 * The one endpoint every scenario serves: create an order with one INSERT in
 * a transaction. Only the idempotency layer around it differs.
 */

/** The order table. `idem_key` records the key each row was created under, to count duplicates. */
export const ORDERS_TABLE = `CREATE TABLE bench_orders (
  id bigserial PRIMARY KEY,
  tenant text NOT NULL,
  sku text NOT NULL,
  quantity integer NOT NULL,
  idem_key text,
  created_at timestamptz NOT NULL DEFAULT now()
)`;

/** $1 tenant, $2 sku, $3 quantity, $4 key. */
export const INSERT_ORDER =
  'INSERT INTO bench_orders (tenant, sku, quantity, idem_key) VALUES ($1, $2, $3, $4) RETURNING id';

export interface OrderInput {
  readonly sku: string;
  readonly quantity: number;
}

export interface Order extends OrderInput {
  readonly id: string;
}

/** The members of a node-postgres client or pool client used here. */
export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/** The members of a node-postgres pool used here. */
export interface PoolLike {
  connect(): Promise<Queryable & { release(destroy?: boolean): void }>;
}

export function parseOrder(body: unknown): OrderInput | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { sku, quantity } = body as Record<string, unknown>;
  if (
    typeof sku !== 'string' ||
    sku === '' ||
    typeof quantity !== 'number' ||
    !Number.isInteger(quantity) ||
    quantity < 1
  )
    return undefined;
  return { sku, quantity };
}

/** The INSERT alone, inside a transaction the caller owns. */
export async function insertOrder(
  client: Queryable,
  tenant: string,
  input: OrderInput,
  key: string | undefined,
): Promise<Order> {
  const { rows } = await client.query(INSERT_ORDER, [tenant, input.sku, input.quantity, key ?? null]);
  const id = (rows[0] as { id: string } | undefined)?.id;
  if (id === undefined) throw new Error('INSERT returned no id');
  return { id, sku: input.sku, quantity: input.quantity };
}

/** BEGIN, INSERT, COMMIT on one pooled connection: the endpoint without any idempotency layer. */
export async function createOrder(
  pool: PoolLike,
  tenant: string,
  input: OrderInput,
  key: string | undefined,
): Promise<Order> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const order = await insertOrder(client, tenant, input, key);
    await client.query('COMMIT');
    return order;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}

export const orderLocation = (order: Order): string => `/orders/${order.id}`;

/** The tenant header every load generator sends; the bench has no authentication. */
export function tenantOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers['x-tenant'];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

export function keyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers['idempotency-key'];
  return typeof value === 'string' ? value : undefined;
}
