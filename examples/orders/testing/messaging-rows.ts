import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';

/** What the tests read through; a node-postgres pool or a test engine's database. */
type Rows = Pick<SqlDatabase<SqlClient>, 'query'>;

export interface OutboxRow {
  readonly id: string;
  readonly topic: string;
  readonly state: string;
  readonly payload: unknown;
}

/** The outbox messages about one order. */
export async function outboxRows(database: Rows, orderId: string): Promise<OutboxRow[]> {
  const { rows } = await database.query<OutboxRow>(
    "SELECT id::text, topic, state, payload FROM retrysafe_outbox WHERE payload->>'order_id' = $1",
    [orderId],
  );
  return rows;
}

/** Every outbox message, for checking that a request added none. */
export async function outboxCount(database: Rows): Promise<number> {
  const { rows } = await database.query<{ n: number }>('SELECT count(*)::int AS n FROM retrysafe_outbox');
  return rows[0]?.n ?? -1;
}

/** The emails sent about one order. */
export async function emailRows(database: Rows, orderId: string): Promise<{ tenant: string; kind: string }[]> {
  const { rows } = await database.query<{ tenant: string; kind: string }>(
    'SELECT tenant, kind FROM emails WHERE order_id = $1',
    [orderId],
  );
  return rows;
}

/** How many times `consumer` recorded `messageId` in its inbox. */
export async function inboxCount(database: Rows, consumer: string, messageId: string): Promise<number> {
  const { rows } = await database.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM retrysafe_inbox WHERE consumer = $1 AND message_id = $2',
    [consumer, messageId],
  );
  return rows[0]?.n ?? -1;
}

/** The provider's recorded webhook events, by id. */
export async function webhookEventRows(
  database: Rows,
  ids: readonly string[],
): Promise<{ id: string; state: string }[]> {
  const { rows } = await database.query<{ id: string; state: string }>(
    "SELECT id, state FROM retrysafe_webhook_events WHERE receiver = 'provider' AND id = ANY($1) ORDER BY id",
    [ids],
  );
  return rows;
}

/** When the order was marked paid, as the table holds it. */
export async function paidAt(database: Rows, orderId: string): Promise<Date | null | undefined> {
  const { rows } = await database.query<{ paid_at: Date | null }>('SELECT paid_at FROM orders WHERE id = $1', [
    orderId,
  ]);
  return rows[0]?.paid_at;
}
