import type { InboxMessage } from '../../../src/inbox/index.js';
import type { SqlClient, SqlDatabase } from '../../../src/store/sql-client.js';

/** The business effect of the test consumers: one row per email sent. No unique key, so a second send would show. */
export const EMAILS_TABLE = `CREATE TABLE IF NOT EXISTS emails (
  id serial PRIMARY KEY,
  consumer text NOT NULL,
  message_id text NOT NULL,
  recipient text NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT now()
)`;

/** A handler that "sends" the email a message asks for, by recording it in `tx`. */
export function sendEmail(consumer: string): (message: InboxMessage, tx: SqlClient) => Promise<void> {
  return async (message, tx) => {
    const { to } = message.payload as { to?: string };
    await tx.query('INSERT INTO emails (consumer, message_id, recipient) VALUES ($1, $2, $3)', [
      consumer,
      message.id,
      to ?? 'nobody@example.test',
    ]);
  };
}

/** `sendEmail`, failing after its first delivery's send, so that the send rolls back; and what each delivery said of `redelivered`. */
export function failingFirstDelivery(consumer: string): {
  handler: (message: InboxMessage, tx: SqlClient) => Promise<void>;
  redelivered: boolean[];
} {
  const redelivered: boolean[] = [];
  const send = sendEmail(consumer);
  const handler = async (message: InboxMessage, tx: SqlClient): Promise<void> => {
    redelivered.push(message.redelivered);
    await send(message, tx);
    if (redelivered.length === 1) throw new Error('the mail server said no');
  };
  return { handler, redelivered };
}

/** Emails sent, by message id. */
export async function emailsByMessage(
  database: SqlDatabase<SqlClient>,
  consumer = 'emails',
): Promise<Record<string, number>> {
  const { rows } = await database.query<{ message_id: string; n: number }>(
    'SELECT message_id, count(*)::int AS n FROM emails WHERE consumer = $1 GROUP BY message_id',
    [consumer],
  );
  return Object.fromEntries(rows.map((row) => [row.message_id, row.n]));
}
