import pg from 'pg';
import { fromPg, portable } from '../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { createMigratedDatabase, createTestDatabase } from '../support/database.js';

/** A migrated database of the test file's own, for the command to point at. */
export interface CliDatabase {
  readonly url: string;
  readonly database: SqlDatabase<SqlClient>;
  close(): Promise<void>;
}

export async function openCliDatabase(options: { migrated?: boolean } = {}): Promise<CliDatabase> {
  const created = options.migrated === false ? await createTestDatabase() : await createMigratedDatabase();
  const pool = new pg.Pool({ connectionString: created.url, max: 5 });
  // The forced DROP DATABASE in close() may end a backend still closing after pool.end(): not a test failure.
  pool.on('error', () => {});
  const database = portable(fromPg(pool));
  return {
    url: created.url,
    database,
    async close() {
      await pool.end();
      await created.drop();
    },
  };
}
