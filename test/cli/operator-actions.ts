import type { CliDatabase } from './cli-database.js';

/** An action as `retrysafe_operator_actions` keeps it. */
export interface RecordedAction {
  readonly actor: string;
  readonly action: string;
  readonly tenant: string | null;
  readonly operation: string | null;
  readonly key: string | null;
  readonly message_id: string | null;
  readonly reason: string;
  readonly seen: Record<string, unknown>;
  readonly detail: Record<string, unknown>;
}

/** The actions recorded on an operation's key or on an outbox message, oldest first. */
export async function actionsOn(db: CliDatabase, subject: string): Promise<RecordedAction[]> {
  return (
    await db.database.query<RecordedAction>(
      `SELECT actor, action, tenant, operation, key, message_id::text, reason, seen, detail
       FROM retrysafe_operator_actions WHERE key = $1 OR message_id::text = $1 ORDER BY id`,
      [subject],
    )
  ).rows;
}

/** The fencing token of the record of `key`, as `retrysafe inspect` shows it. */
export async function fencingTokenOf(db: CliDatabase, key: string): Promise<number> {
  const [row] = (
    await db.database.query<{ fencing_token: number }>(
      'SELECT fencing_token FROM retrysafe_operations WHERE key = $1',
      [key],
    )
  ).rows;
  if (row === undefined) throw new Error(`no record of ${key}`);
  return row.fencing_token;
}
