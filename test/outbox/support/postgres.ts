import pg from 'pg';
import { fromPg, migrate, portable } from '../../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../../src/store/sql-client.js';
import { createMigratedDatabase } from '../../support/database.js';
import { EMAILS_TABLE } from '../../inbox/programs/emails.js';

/** A migrated database of its own on the PostgreSQL server, with the `emails` table, that child processes can reach by URL. */
export interface SharedDatabase {
  readonly url: string;
  readonly database: SqlDatabase<SqlClient>;
  /** Empties the outbox, the inbox, the webhook events and the emails. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function openSharedDatabase(): Promise<SharedDatabase> {
  const db = await createMigratedDatabase();
  const pool = new pg.Pool({ connectionString: db.url });
  // The forced DROP DATABASE can end an idle client still closing after pool.end(); that is no failure.
  pool.on('error', () => {});
  const database = portable(fromPg(pool));
  await migrate(database);
  await database.query(EMAILS_TABLE);
  return {
    url: db.url,
    database,
    async reset() {
      await database.query('TRUNCATE retrysafe_outbox, retrysafe_inbox, retrysafe_webhook_events, emails');
    },
    async close() {
      await pool.end();
      await db.drop();
    },
  };
}
